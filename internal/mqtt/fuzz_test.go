package mqtt_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/waitset"
	"github.com/robotexec/robotexec/subscribers"
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
// MQTT 3.1.1 broker. The intake must never panic, must deliver a message,
// intact, to exactly the subscriptions whose filter matches its topic
// (per subscribers.Match; a shared subscription matches by its inner
// filter), a retained one only to the non-shared ones that had no
// retained message on its topic yet, and count it: too_large on the
// client and on each matching subscription when the payload is over
// MaxPayload, unrouted when no subscription matches. A QoS 1 or 2 message
// is acknowledged exactly once, after the hand-over; a QoS 0 one never.
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
		f.Add(s.topic, []byte(s.payload), s.qos, false, false)
		f.Add(s.topic, []byte(s.payload), s.qos, true, true)
	}
	c, subs := intakeFixture(f)
	hadRetained := make([]map[string]bool, len(subs))
	for i := range hadRetained {
		hadRetained[i] = map[string]bool{}
	}
	f.Fuzz(func(t *testing.T, topic string, payload []byte, qos byte, dup, retained bool) {
		before := c.Stats()
		subsBefore := make([]subscribers.Stats, len(subs))
		for i, s := range subs {
			subsBefore[i] = s.Stats()
		}
		m := &mqtt.InjectedMessage{TopicName: topic, Body: payload, QoSLevel: qos, Dup: dup, Retain: retained}
		c.Inject(m)
		deadline := time.Now().Add(5 * time.Second)
		for c.Stats().Pending > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("the intake did not hand %q over within 5 s", topic)
			}
			time.Sleep(50 * time.Microsecond)
		}
		tooLarge := len(payload) > intakeMax
		matched := 0
		for i, s := range subs {
			route, _ := bus.RouteFilter(s.Filter())
			want := subscribers.Match(route, topic)
			if want && retained {
				want = !s.Shared() && (tooLarge || !hadRetained[i][topic])
				hadRetained[i][topic] = hadRetained[i][topic] || !tooLarge
			}
			if want {
				matched++
			}
			got := drain(s)
			if want && !tooLarge {
				if len(got) != 1 {
					t.Fatalf("%q: %d messages for %q, want 1", s.Filter(), len(got), topic)
				}
				g := got[0]
				if g.Topic != topic || !bytes.Equal(g.Payload, payload) || g.QoS != qos || g.Retained != retained {
					t.Fatalf("%q: got %+v for %q %q QoS %d retained %v", s.Filter(), g, topic, payload, qos, retained)
				}
			} else if len(got) != 0 {
				t.Fatalf("%q: got %d messages for %q (match %v, too large %v)", s.Filter(), len(got), topic, want, tooLarge)
			}
			drops := s.Stats().Dropped[subscribers.TooLarge] - subsBefore[i].Dropped[subscribers.TooLarge]
			if wantDrops := b2u(want && tooLarge); drops != wantDrops {
				t.Fatalf("%q: %d too_large drops for %q, want %d", s.Filter(), drops, topic, wantDrops)
			}
		}
		after := c.Stats()
		delta := func(name string, a, b uint64, want bool) {
			if a-b != b2u(want) {
				t.Fatalf("%s: counted %d for %q (%d bytes), want %d", name, a-b, topic, len(payload), b2u(want))
			}
		}
		delta("received", after.Received, before.Received, true)
		delta("redelivered", after.Redelivered, before.Redelivered, dup)
		delta("too_large", after.Dropped[subscribers.TooLarge], before.Dropped[subscribers.TooLarge], tooLarge)
		delta("unrouted", after.Unrouted, before.Unrouted, matched == 0 && !tooLarge && topic != intakeStatus)
		delta("delivered", after.Delivered, before.Delivered, matched > 0 && !tooLarge)
		if want := int(b2u(qos > 0)); m.Acks() != want {
			t.Fatalf("%q QoS %d acknowledged %d times, want %d", topic, qos, m.Acks(), want)
		}
	})
}

// intakeFixture dials FuzzIntake's client, which never connects, and
// attaches a subscription of each of intakeFilters, registered with a
// wait set of their own: no executor takes their messages.
func intakeFixture(f *testing.F) (*mqtt.Client, []*subscribers.Subscription) {
	c, err := mqtt.Dial(mqtt.Config{
		Broker: "tcp://127.0.0.1:1", ClientID: intakeID, QoS: 1, MaxPayload: intakeMax,
		Logger: slog.New(slog.DiscardHandler), MinBackoff: time.Second, MaxBackoff: time.Minute,
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = c.Close() })
	set := waitset.New(nil, nil)
	subs := make([]*subscribers.Subscription, len(intakeFilters))
	for i, filter := range intakeFilters {
		s, err := bus.New(filter, subscribers.Options{Depth: 4})
		if err != nil {
			f.Fatal(err)
		}
		set.Register(bus.Entity(s), waitset.Subscription)
		if err := c.Attach(s); err != nil {
			f.Fatal(err)
		}
		subs[i] = s
	}
	return c, subs
}

// drain takes every message queued in s.
func drain(s *subscribers.Subscription) []subscribers.Message {
	var out []subscribers.Message
	for {
		m, _, ok, _ := bus.Take(s)
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
