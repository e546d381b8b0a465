package mqtt_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/waitset"
)

// The intake of FuzzIntake's client: its ID (hence its status topic),
// its MaxPayload, and the filters of its subscriptions.
const (
	intakeID     = "fuzz"
	intakeStatus = "robotexec/fuzz/status"
	intakeMax    = 64
)

var intakeFilters = []string{
	"#", "+", "+/+", "/#", "+/", "a/#", "a/+", "a/b", "+/b/#", "a/b/c/d",
	"$SYS/#", "$share/g/a/#", intakeStatus, "é/+/#",
}

// FuzzIntake hands arbitrary messages (topic, payload, QoS, flags) to the
// intake of a client, as paho would on their arrival from the broker:
// onMessage, the intake goroutine, the router. A broker is not needed:
// the client dials a port where none listens, and the intake works all
// the same. The messages carry no subscription identifiers, as from an
// MQTT 3.1.1 broker.
//
// Each input is one message and then, as then's pairs of bytes say (see
// intakeScript), up to 7 more, so that the intake's memory of retained
// values is fuzzed; each input has a client and subscriptions of its
// own, so that it fails or passes alone as in a run.
//
// The intake must never panic, must deliver a message, intact, to exactly
// the subscriptions whose filter matches its topic (per subscribers.Match,
// and never for the empty topic; a shared subscription matches
// by its inner filter), a retained one only to the non-shared ones to
// which its value is news (see intakeModel), and count it: too_large on
// the client and on each matching subscription when the payload is over
// MaxPayload, unrouted when no subscription takes it. A QoS 1 or 2
// message is acknowledged exactly once, after the hand-over; a QoS 0 one
// never.
func FuzzIntake(f *testing.F) {
	for _, s := range []struct {
		topic, payload string
		qos            byte
	}{
		{"a/b", "hello", 1}, {"a", "", 0}, {"", "x", 1}, {"/", "", 2}, {"a/", "", 0},
		{"$SYS/load", "1", 1}, {"$share/g/a/b", "", 1}, {"a/+/b", "", 0}, {"#", "", 1},
		{"a/b", strings.Repeat("x", intakeMax), 1}, {"a/b", strings.Repeat("x", intakeMax+1), 1},
		{"a/b", strings.Repeat("x", intakeMax+1), 0}, {"$x", strings.Repeat("y", 100), 2},
		{intakeStatus, mqtt.StatusOffline, 1}, {"robotexec/fuzz/fence", "t:fence:1", 0},
		{"é/x/y", "ü", 1}, {"a\x00b", "", 1}, {"\xff/b", "\xfe", 1}, {"a/b/c/d", "", 3}, {"a/b", "", 255},
	} {
		f.Add(s.topic, []byte(s.payload), s.qos, false, false, []byte(nil))
		f.Add(s.topic, []byte(s.payload), s.qos, true, true, []byte(nil))
	}
	// Retained values: the same again, another, a copy sent again (DUP),
	// a live one in between, one too large, on the topic and on "a/b".
	f.Add("a/b", []byte("v"), byte(1), false, true, []byte{0x09, 0, 0x09, 'w', 0x0d, 'u', 0x01, 'z', 0x09, 'z', 0x09, 0xff, 0x09, 'w'})
	f.Add("x", []byte("v"), byte(0), false, true, []byte{0x18, 0, 0x18, 0, 0x08, 0, 0x0c, 'w', 0x00, 'w', 0x08, 'v'})
	f.Fuzz(func(t *testing.T, topic string, payload []byte, qos byte, dup, retained bool, then []byte) {
		c, subs := intakeFixture(t)
		model := newIntakeModel(subs)
		for _, m := range intakeScript(topic, payload, qos, dup, retained, then) {
			checkIntake(t, c, subs, model, m)
		}
	})
}

// intakeScript returns FuzzIntake's messages: the first as given, then
// one for each pair of bytes of then, at most 7: the first byte's bits 0-1
// are its QoS, bit 2 DUP, bit 3 retained, bit 4 its topic ("a/b", else
// the first's topic); the second byte is its payload, one byte, but 0
// (the first's payload) and 0xff (one over MaxPayload).
func intakeScript(topic string, payload []byte, qos byte, dup, retained bool, then []byte) []*mqtt.InjectedMessage {
	msgs := []*mqtt.InjectedMessage{{TopicName: topic, Body: payload, QoSLevel: qos, Dup: dup, Retain: retained}}
	for i := 0; i+1 < len(then) && len(msgs) < 8; i += 2 {
		fl, p := then[i], then[i+1]
		m := &mqtt.InjectedMessage{TopicName: topic, Body: []byte{p}, QoSLevel: fl & 3, Dup: fl&4 != 0, Retain: fl&8 != 0}
		if fl&16 != 0 {
			m.TopicName = "a/b"
		}
		switch p {
		case 0:
			m.Body = payload
		case 0xff:
			m.Body = bytes.Repeat([]byte("x"), intakeMax+1)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// intakeModel is what FuzzIntake expects of the router's memory of
// retained values: per subscription and topic, the value it had last
// there, once it had a retained one.
type intakeModel struct {
	routes []string
	seen   []map[string]string
}

func newIntakeModel(subs []*subscribers.Subscription) *intakeModel {
	m := &intakeModel{routes: make([]string, len(subs)), seen: make([]map[string]string, len(subs))}
	for i, s := range subs {
		m.routes[i], _ = bus.RouteFilter(s.Filter())
		m.seen[i] = map[string]string{}
	}
	return m
}

// expect returns whether subscription i, of subs, is to take msg, and
// whether it is to count it as too large; it records what i had.
func (m *intakeModel) expect(i int, s *subscribers.Subscription, msg *mqtt.InjectedMessage) (take, drop bool) {
	if msg.TopicName == "" || !subscribers.Match(m.routes[i], msg.TopicName) {
		// A topic name is at least one character long (MQTT 5,
		// 4.7.3): without one, a message is for no subscription.
		return false, false
	}
	if len(msg.Body) > intakeMax {
		// A retained one is not recorded: a later copy may come whole.
		return false, !msg.Retain || !bus.Shared(s.Filter())
	}
	old, had := m.seen[i][msg.TopicName]
	switch {
	case !msg.Retain:
		if had {
			m.seen[i][msg.TopicName] = string(msg.Body)
		}
		return true, false
	case bus.Shared(s.Filter()), had && (old == string(msg.Body) || msg.Dup):
		// A copy sent again may be older than what the subscription
		// had since.
		return false, false
	}
	m.seen[i][msg.TopicName] = string(msg.Body)
	return true, false
}

// checkIntake injects msg into c and checks what subs took and counted.
func checkIntake(t *testing.T, c *mqtt.Client, subs []*subscribers.Subscription, model *intakeModel, msg *mqtt.InjectedMessage) {
	topic, payload := msg.TopicName, msg.Body
	before := c.Stats()
	subsBefore := make([]subscribers.Stats, len(subs))
	for i, s := range subs {
		subsBefore[i] = s.Stats()
	}
	c.Inject(msg)
	deadline := time.Now().Add(5 * time.Second)
	for c.Stats().Pending > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the intake did not hand %q over within 5 s", topic)
		}
		time.Sleep(50 * time.Microsecond)
	}
	tooLarge := len(payload) > intakeMax
	taken := 0
	for i, s := range subs {
		take, drop := model.expect(i, s, msg)
		if take {
			taken++
		}
		got := drain(s)
		if take {
			if len(got) != 1 {
				t.Fatalf("%q: %d messages for %q, want 1", s.Filter(), len(got), topic)
			}
			g := got[0]
			if g.Topic != topic || !bytes.Equal(g.Payload, payload) || g.QoS != msg.QoSLevel || g.Retained != msg.Retain {
				t.Fatalf("%q: got %+v for %q %q QoS %d retained %v", s.Filter(), g, topic, payload, msg.QoSLevel, msg.Retain)
			}
		} else if len(got) != 0 {
			t.Fatalf("%q: got %d messages for %q (%q, retained %v, DUP %v), want none", s.Filter(), len(got), topic, payload, msg.Retain, msg.Dup)
		}
		drops := s.Stats().Dropped[subscribers.TooLarge] - subsBefore[i].Dropped[subscribers.TooLarge]
		if drops != b2u(drop) {
			t.Fatalf("%q: %d too_large drops for %q, want %d", s.Filter(), drops, topic, b2u(drop))
		}
	}
	after := c.Stats()
	delta := func(name string, a, b uint64, want bool) {
		if a-b != b2u(want) {
			t.Fatalf("%s: counted %d for %q (%d bytes), want %d", name, a-b, topic, len(payload), b2u(want))
		}
	}
	delta("received", after.Received, before.Received, true)
	delta("redelivered", after.Redelivered, before.Redelivered, msg.Dup)
	delta("too_large", after.Dropped[subscribers.TooLarge], before.Dropped[subscribers.TooLarge], tooLarge)
	delta("unrouted", after.Unrouted, before.Unrouted, taken == 0 && !tooLarge && topic != intakeStatus)
	delta("delivered", after.Delivered, before.Delivered, taken > 0)
	if want := int(b2u(msg.QoSLevel > 0)); msg.Acks() != want {
		t.Fatalf("%q QoS %d acknowledged %d times, want %d", topic, msg.QoSLevel, msg.Acks(), want)
	}
}

// intakeFixture dials a client for FuzzIntake, which never connects, and
// attaches a subscription of each of intakeFilters, registered with a
// wait set of their own: no executor takes their messages. The test's
// cleanup closes the client.
func intakeFixture(t *testing.T) (*mqtt.Client, []*subscribers.Subscription) {
	c, err := mqtt.Dial(mqtt.Config{
		Broker: "tcp://127.0.0.1:1", ClientID: intakeID, QoS: 1, MaxPayload: intakeMax,
		Logger: slog.New(slog.DiscardHandler), MinBackoff: time.Second, MaxBackoff: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	set := waitset.New(nil, nil)
	subs := make([]*subscribers.Subscription, len(intakeFilters))
	for i, filter := range intakeFilters {
		s, err := subscribers.New(filter, subscribers.Options{Depth: 4})
		if err != nil {
			t.Fatal(err)
		}
		set.Register(s.Entity(), waitset.Subscription)
		if err := c.Attach(s); err != nil {
			t.Fatal(err)
		}
		subs[i] = s
	}
	return c, subs
}

// drain takes every message queued in s.
func drain(s *subscribers.Subscription) []subscribers.Message {
	var out []subscribers.Message
	for {
		var m subscribers.Message
		ok, _ := s.Take(&m)
		if !ok {
			return out
		}
		out = append(out, m)
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
