package subscribers_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/subscribers"
)

// scriptedRemote is a router's remote that records what the router asks of
// it; the tests play the broker's part by calling Receive themselves. The
// MQTT client is the real remote: package subscribers/mqtt tests the
// router with real brokers.
type scriptedRemote struct {
	mu        sync.Mutex
	subs      map[string]byte // filter → QoS of the last Subscribe
	unsubs    []string
	published []subscribers.Message
	seq       uint64 // the last hand-over's number
	fail      error
}

func newScriptedRemote() *scriptedRemote {
	return &scriptedRemote{subs: map[string]byte{}}
}

func (r *scriptedRemote) Subscribe(filter string, qos byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subs[filter] = qos
	return nil
}

func (r *scriptedRemote) Unsubscribe(filter string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.subs, filter)
	r.unsubs = append(r.unsubs, filter)
}

func (r *scriptedRemote) Publish(m subscribers.Message, sent subscribers.Sent) error {
	r.mu.Lock()
	if r.fail != nil {
		r.mu.Unlock()
		return r.fail
	}
	r.published = append(r.published, m)
	r.seq++
	seq := r.seq
	r.mu.Unlock()
	if sent != nil {
		sent.Sent(seq, nil)
	}
	return nil
}

// echo returns the broker's copy of the i-th publication: no retain flag,
// received now.
func (r *scriptedRemote) echo(i int) *subscribers.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.published[i]
	m.Retained = false
	m.Received = time.Now()
	return &m
}

func remoteRouter(t *testing.T, opts subscribers.RouterOptions, filters ...string) (*subscribers.Router, *scriptedRemote, map[string]*subscribers.Subscription) {
	t.Helper()
	rem := newScriptedRemote()
	opts.Remote = rem
	r := subscribers.NewRouter(opts)
	return r, rem, attached(t, r, filters...)
}

func publishOn(t *testing.T, r *subscribers.Router, topic, payload string, qos byte) int {
	t.Helper()
	n, err := r.Publish(subscribers.Message{Topic: topic, Payload: []byte(payload), QoS: qos})
	require.NoError(t, err)
	return n
}

// A publication reaches the matching non-shared subscriptions of the
// process directly and the remote for everyone else; a shared
// subscription gets only what the broker gives it.
func TestRouterLocalFirst(t *testing.T) {
	r, rem, subs := remoteRouter(t, subscribers.RouterOptions{}, "a/+", "a/b", "$share/g/a/+", "x")
	require.Equal(t, map[string]byte{"a/+": 0, "a/b": 0, "$share/g/a/+": 0, "x": 0}, rem.subs)
	require.Equal(t, 2, publishOn(t, r, "a/b", "p", 1))
	require.Len(t, rem.published, 1)
	require.Equal(t, "a/b", rem.published[0].Topic)
	require.Equal(t, byte(1), rem.published[0].QoS)
	require.Equal(t, map[string][]string{"a/+": {"p"}, "a/b": {"p"}}, received(subs))

	// The broker's echo goes to the shared subscription only, which the
	// broker picked.
	rc := r.Receive(rem.echo(0))
	require.Equal(t, subscribers.Receipt{Matched: 3, Accepted: 1, Echo: true}, rc)
	require.Equal(t, map[string][]string{"$share/g/a/+": {"p"}}, received(subs))
	require.Equal(t, subscribers.EchoStats{Matched: 1}, r.EchoStats())
}

// With RemoteOnly every subscription gets publications from the broker.
func TestRouterRemoteOnly(t *testing.T) {
	r, rem, subs := remoteRouter(t, subscribers.RouterOptions{RemoteOnly: true}, "a/+")
	require.Zero(t, publishOn(t, r, "a/b", "p", 0))
	require.Len(t, rem.published, 1)
	require.Empty(t, received(subs))
	rc := r.Receive(rem.echo(0))
	require.Equal(t, subscribers.Receipt{Matched: 1, Accepted: 1}, rc)
	require.Equal(t, map[string][]string{"a/+": {"p"}}, received(subs))
}

// A failed publication awaits no echo; the local subscriptions have it.
func TestRouterPublishFails(t *testing.T) {
	r, rem, subs := remoteRouter(t, subscribers.RouterOptions{}, "t")
	rem.fail = errors.New("not connected")
	n, err := r.Publish(subscribers.Message{Topic: "t", Payload: []byte("p")})
	require.ErrorIs(t, err, rem.fail)
	require.Equal(t, 1, n)
	require.Equal(t, subscribers.EchoStats{}, r.EchoStats())
	require.Equal(t, map[string][]string{"t": {"p"}}, received(subs))
}

// The remote subscribes a filter at each attach with the highest QoS its
// subscriptions asked for, and unsubscribes it when the last detaches.
func TestRouterRemoteFilters(t *testing.T) {
	rem := newScriptedRemote()
	r := subscribers.NewRouter(subscribers.RouterOptions{Remote: rem, QoS: 1})
	s1 := newSub(t, "a/#", subscribers.Options{})
	s2 := newSub(t, "a/#", subscribers.Options{})
	require.NoError(t, r.QoS(2).Attach(s1))
	require.NoError(t, r.Attach(s2))
	require.Equal(t, map[string]byte{"a/#": 2}, rem.subs)
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
		opts subscribers.RouterOptions
		kept bool
	}{
		{"no echo, a keeper", subscribers.RouterOptions{NoEcho: true, Audience: keeper}, true},
		{"no echo, no keeper", subscribers.RouterOptions{NoEcho: true}, false},
		{"echoes", subscribers.RouterOptions{}, false},
		{"remote only", subscribers.RouterOptions{RemoteOnly: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, rem, _ := remoteRouter(t, tc.opts)
			_, err := r.Publish(subscribers.Message{Topic: "state", Payload: []byte("on"), Retained: true})
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

func (a *scriptedAudience) OwnRetained(filter string) []subscribers.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []subscribers.Message
	for topic, p := range a.own {
		if subscribers.Match(filter, topic) {
			out = append(out, subscribers.Message{Topic: topic, Payload: []byte(p), Retained: true})
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
	r, rem, subs := remoteRouter(t, subscribers.RouterOptions{Audience: aud, NoEcho: true}, "t")
	pub, err := r.Publisher("t")
	require.NoError(t, err)
	require.NoError(t, pub.Publish([]byte("local only")))
	require.Empty(t, rem.published)
	_, err = pub.PublishMessage(subscribers.Message{Payload: []byte("retained"), Retained: true})
	require.NoError(t, err)
	require.Len(t, rem.published, 1, "the broker keeps retained messages")
	aud.want("t")
	require.NoError(t, pub.Publish([]byte("wanted")))
	require.Len(t, rem.published, 2)
	require.Equal(t, "wanted", string(rem.published[1].Payload))
	got, _ := drain(subs["t"])
	require.Equal(t, []string{"local only", "retained", "wanted"}, got)

	// Without local first, the process's own subscriptions want it all.
	ro, rem2, _ := remoteRouter(t, subscribers.RouterOptions{Audience: aud, RemoteOnly: true}, "u")
	publishOn(t, ro, "u", "x", 0)
	require.Len(t, rem2.published, 1)
}
