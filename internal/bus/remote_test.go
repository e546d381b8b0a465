package bus_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
)

// scriptedRemote is a router's remote that records what the router asks of
// it; the tests play the broker's part by calling Receive themselves. The
// MQTT client is the real remote: package internal/mqtt tests the
// router with real brokers.
type scriptedRemote struct {
	mu        sync.Mutex
	subs      map[string]bus.WireFilter // filter → the last Subscribe
	unsubs    []string
	published []bus.Message
	fail      error
}

func newScriptedRemote() *scriptedRemote {
	return &scriptedRemote{subs: map[string]bus.WireFilter{}}
}

func (r *scriptedRemote) Subscribe(w bus.WireFilter) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subs[w.Filter] = w
	return nil
}

func (r *scriptedRemote) Unsubscribe(filter string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.subs, filter)
	r.unsubs = append(r.unsubs, filter)
}

func (r *scriptedRemote) Publish(m bus.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.published = append(r.published, m)
	return nil
}

// id returns the identifier that the last Subscribe of filter asked for.
func (r *scriptedRemote) id(filter string) uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.subs[filter].ID
}

// qos returns the filters subscribed, with their QoS.
func (r *scriptedRemote) qos() map[string]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]byte{}
	for f, w := range r.subs {
		out[f] = w.QoS
	}
	return out
}

// copyOf returns the broker's copy of the i-th publication: no retain
// flag, received now.
func (r *scriptedRemote) copyOf(i int) *bus.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.published[i]
	m.Retained = false
	m.Received = time.Now()
	return &m
}

func remoteRouter(t *testing.T, opts bus.RouterOptions, filters ...string) (*bus.Router, *scriptedRemote, map[string]*bus.Subscription) {
	t.Helper()
	rem := newScriptedRemote()
	opts.Remote = rem
	r := bus.NewRouter(opts)
	return r, rem, attached(t, r, filters...)
}

func publishOn(t *testing.T, r *bus.Router, topic, payload string, qos byte) int {
	t.Helper()
	n, err := r.Publish(context.Background(), bus.Message{Topic: topic, Payload: []byte(payload), QoS: qos})
	require.NoError(t, err)
	return n
}

// A publication reaches the matching non-shared subscriptions of the
// process directly and the remote for everyone else; the non-shared
// filters are subscribed with No Local, so that the broker does not send
// it back, and a shared subscription gets only what the broker gives it.
func TestRouterLocalFirst(t *testing.T) {
	r, rem, subs := remoteRouter(t, bus.RouterOptions{InProcess: true}, "a/+", "a/b", "$share/g/a/+", "x")
	require.Equal(t, map[string]byte{"a/+": 0, "a/b": 0, "$share/g/a/+": 0, "x": 0}, rem.qos())
	for f, w := range rem.subs {
		require.Equal(t, f != "$share/g/a/+", w.NoLocal, f)
	}
	require.Equal(t, 2, publishOn(t, r, "a/b", "p", 1))
	require.Len(t, rem.published, 1)
	require.Equal(t, "a/b", rem.published[0].Topic)
	require.Equal(t, byte(1), rem.published[0].QoS)
	require.Equal(t, map[string][]string{"a/+": {"p"}, "a/b": {"p"}}, received(subs))

	// The broker picked this process for the shared subscription.
	rc := bus.Receive(r, rem.copyOf(0), []uint32{rem.id("$share/g/a/+")})
	require.Equal(t, bus.Receipt{Matched: 1, Accepted: 1}, rc)
	require.Equal(t, map[string][]string{"$share/g/a/+": {"p"}}, received(subs))
}

// Without InProcess every subscription gets publications from the broker,
// which sends them back (no No Local).
func TestRouterNotInProcess(t *testing.T) {
	r, rem, subs := remoteRouter(t, bus.RouterOptions{}, "a/+")
	require.False(t, rem.subs["a/+"].NoLocal)
	require.Zero(t, publishOn(t, r, "a/b", "p", 0))
	require.Len(t, rem.published, 1)
	require.Empty(t, received(subs))
	rc := bus.Receive(r, rem.copyOf(0), []uint32{rem.id("a/+")})
	require.Equal(t, bus.Receipt{Matched: 1, Accepted: 1}, rc)
	require.Equal(t, map[string][]string{"a/+": {"p"}}, received(subs))
}

// A received message goes to the subscriptions of the filters whose
// identifiers it carries: once each, whether the broker sends one copy for
// several filters or one copy per filter; an identifier of no filter of
// the router's (a previous run's) names none. Without identifiers (MQTT
// 3.1.1) every matching subscription gets it.
func TestRouterReceiveByID(t *testing.T) {
	r, rem, subs := remoteRouter(t, bus.RouterOptions{InProcess: true}, "a/#", "a/+", "$share/g/a/b")
	m := func(p string) *bus.Message { return &bus.Message{Topic: "a/b", Payload: []byte(p)} }
	hash, plus, shared := rem.id("a/#"), rem.id("a/+"), rem.id("$share/g/a/b")
	require.Equal(t, 3, bus.Receive(r, m("one copy"), []uint32{hash, plus, shared}).Accepted)
	require.Equal(t, 1, bus.Receive(r, m("per filter"), []uint32{hash}).Accepted)
	require.Equal(t, 1, bus.Receive(r, m("per filter"), []uint32{plus}).Accepted)
	require.Equal(t, bus.Receipt{}, bus.Receive(r, m("old run"), []uint32{12345}))
	require.Equal(t, 3, bus.Receive(r, m("3.1.1"), nil).Accepted)
	require.Equal(t, map[string][]string{
		"a/#":          {"3.1.1", "one copy", "per filter"},
		"a/+":          {"3.1.1", "one copy", "per filter"},
		"$share/g/a/b": {"3.1.1", "one copy"},
	}, received(subs))
	require.Zero(t, bus.Receive(r, &bus.Message{Topic: "c", Payload: []byte("x")}, []uint32{hash}).Matched,
		"an identifier of a filter that does not match the topic names none")
}

// The identifiers of a filter are the same in every run of a process
// (a persistent session's queued messages carry the previous run's);
// each attachment subscribes again with a new one.
func TestRouterIDsStable(t *testing.T) {
	_, rem1, _ := remoteRouter(t, bus.RouterOptions{InProcess: true}, "a/#", "b")
	r2, rem2, _ := remoteRouter(t, bus.RouterOptions{InProcess: true}, "b", "a/#")
	require.Equal(t, rem1.id("a/#"), rem2.id("a/#"))
	require.Equal(t, rem1.id("b"), rem2.id("b"))
	require.NotEqual(t, rem1.id("a/#"), rem1.id("b"))
	first := rem2.id("b")
	attached(t, r2, "b")
	require.Equal(t, first+1, rem2.id("b"), "the next attachment's identifier")
}

// A retained message sent for a SUBSCRIBE carries that subscription's
// identifier: it goes to the subscription whose attachment made it, not
// to the others of the filter, which had theirs; without identifiers each
// subscription gets a topic's retained message once.
func TestRouterRetainedByAttachment(t *testing.T) {
	r, rem, _ := remoteRouter(t, bus.RouterOptions{InProcess: true})
	first := newSub(t, "r/t", bus.Options{})
	require.NoError(t, r.Attach(first))
	firstID := rem.id("r/t")
	ret := func(p string) *bus.Message {
		return &bus.Message{Topic: "r/t", Payload: []byte(p), Retained: true}
	}
	require.Equal(t, 1, bus.Receive(r, ret("v1"), []uint32{firstID}).Accepted)
	require.Zero(t, bus.Receive(r, ret("v1"), []uint32{firstID}).Matched, "the same copy again, after a reconnection")
	second := newSub(t, "r/t", bus.Options{})
	require.NoError(t, r.Attach(second))
	secondID := rem.id("r/t")
	require.NotEqual(t, firstID, secondID)
	require.Equal(t, 1, bus.Receive(r, ret("v1"), []uint32{secondID}).Accepted)
	live := &bus.Message{Topic: "r/t", Payload: []byte("v2")}
	require.Equal(t, 2, bus.Receive(r, live, []uint32{secondID}).Accepted)
	got1, _ := drain(first)
	got2, _ := drain(second)
	require.Equal(t, []string{"v1", "v2"}, got1)
	require.Equal(t, []string{"v1", "v2"}, got2)

	// MQTT 3.1.1: no identifiers.
	r3, _, subs := remoteRouter(t, bus.RouterOptions{}, "r/#", "r/+", "$share/g/r/t")
	for range 3 {
		bus.Receive(r3, ret("v"), nil)
	}
	require.Equal(t, map[string][]string{"r/#": {"v"}, "r/+": {"v"}}, received(subs))
}

// A failed publication still reached the local subscriptions.
func TestRouterPublishFails(t *testing.T) {
	r, rem, subs := remoteRouter(t, bus.RouterOptions{InProcess: true}, "t")
	rem.fail = errors.New("not connected")
	n, err := r.Publish(context.Background(), bus.Message{Topic: "t", Payload: []byte("p")})
	require.ErrorIs(t, err, rem.fail)
	require.Equal(t, 1, n)
	require.Equal(t, map[string][]string{"t": {"p"}}, received(subs))
}

// The remote subscribes a filter at each attach with the highest QoS its
// subscriptions asked for, and unsubscribes it when the last detaches.
func TestRouterRemoteFilters(t *testing.T) {
	rem := newScriptedRemote()
	r := bus.NewRouter(bus.RouterOptions{Remote: rem, QoS: 1})
	s1 := newSub(t, "a/#", bus.Options{})
	s2 := newSub(t, "a/#", bus.Options{})
	require.NoError(t, r.QoS(2).Attach(s1))
	require.NoError(t, r.Attach(s2))
	require.Equal(t, map[string]byte{"a/#": 2}, rem.qos())
	require.ErrorContains(t, r.Attach(s2), "already attached")
	r.Detach(s1)
	require.Empty(t, rem.unsubs)
	s2.Close()
	require.Equal(t, []string{"a/#"}, rem.unsubs)
	r.Detach(s2)
	require.Equal(t, []string{"a/#"}, rem.unsubs, "detaching twice is harmless")
}

// With a remote the broker keeps the retained messages: a router whose
// remote sends none of its own publications back delivers a subscription
// attached later those of its own that the broker still keeps (the
// audience knows), none that another client replaced; the others get
// them from the broker.
func TestRouterRetainedWithRemote(t *testing.T) {
	keeper := &scriptedAudience{wanted: map[string]bool{}, own: map[string]string{}}
	for _, tc := range []struct {
		name string
		opts bus.RouterOptions
		kept bool
	}{
		{"a keeper", bus.RouterOptions{InProcess: true, Audience: keeper}, true},
		{"no keeper", bus.RouterOptions{InProcess: true}, false},
		{"remote only", bus.RouterOptions{Audience: keeper}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, rem, _ := remoteRouter(t, tc.opts)
			_, err := r.Publish(context.Background(), bus.Message{Topic: "state", Payload: []byte("on"), Retained: true})
			require.NoError(t, err)
			require.True(t, rem.published[0].Retained, "the broker keeps retained messages")
			keeper.keep("state", "on")
			late := attached(t, r, "state")
			if tc.kept {
				require.Equal(t, map[string][]string{"state": {"on"}}, received(late))
			} else {
				require.Empty(t, received(late))
			}
			keeper.keep("state", "") // another client replaced it
			require.Empty(t, received(attached(t, r, "#")))
		})
	}
}

// scriptedAudience wants the topics in its set, and keeps the router's own
// retained messages in own, by topic.
type scriptedAudience struct {
	mu     sync.Mutex
	gen    uint64
	wanted map[string]bool
	own    map[string]string
}

func (a *scriptedAudience) keep(topic, payload string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if payload == "" {
		delete(a.own, topic)
		return
	}
	a.own[topic] = payload
}

func (a *scriptedAudience) OwnRetained(filter string) []bus.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []bus.Message
	for topic, p := range a.own {
		if bus.Match(filter, topic) {
			out = append(out, bus.Message{Topic: topic, Payload: []byte(p), Retained: true})
		}
	}
	return out
}

func (a *scriptedAudience) Generation() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.gen
}

func (a *scriptedAudience) Wanted(topic string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.wanted[topic]
}

func (a *scriptedAudience) want(topic string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.wanted[topic] = true
	a.gen++
}

// A publication that nobody beyond the process wants stays in the
// process, retained ones aside; the router asks again when the audience
// changes.
func TestRouterAudience(t *testing.T) {
	aud := &scriptedAudience{wanted: map[string]bool{}, own: map[string]string{}}
	r, rem, subs := remoteRouter(t, bus.RouterOptions{InProcess: true, Audience: aud}, "t")
	pub, err := r.Publisher("t")
	require.NoError(t, err)
	require.NoError(t, pub.Publish(context.Background(), []byte("local only")))
	require.Empty(t, rem.published)
	_, err = pub.PublishMessage(context.Background(), bus.Message{Payload: []byte("retained"), Retained: true})
	require.NoError(t, err)
	require.Len(t, rem.published, 1, "the broker keeps retained messages")
	aud.want("t")
	require.NoError(t, pub.Publish(context.Background(), []byte("wanted")))
	require.Len(t, rem.published, 2)
	require.Equal(t, "wanted", string(rem.published[1].Payload))
	got, _ := drain(subs["t"])
	require.Equal(t, []string{"local only", "retained", "wanted"}, got)

	// Without in_process, the process's own subscriptions want it all.
	ro, rem2, _ := remoteRouter(t, bus.RouterOptions{Audience: aud}, "u")
	publishOn(t, ro, "u", "x", 0)
	require.Len(t, rem2.published, 1)
}
