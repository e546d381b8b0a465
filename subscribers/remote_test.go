package subscribers_test

import (
	"errors"
	"fmt"
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

// A subscription that attached after a publication did not have it, and
// does not get its echo either: the broker would not have sent it a
// message published before it subscribed. Each publisher's order is kept.
func TestRouterEchoSkipsLaterSubscriptions(t *testing.T) {
	r, rem, subs := remoteRouter(t, subscribers.RouterOptions{}, "a/+")
	publishOn(t, r, "a/b", "1", 1)
	late := attached(t, r, "a/#")
	publishOn(t, r, "a/b", "2", 1)
	for i := range 2 {
		rc := r.Receive(rem.echo(i))
		require.True(t, rc.Echo)
		require.Zero(t, rc.Accepted)
	}
	require.Equal(t, map[string][]string{"a/+": {"1", "2"}}, received(subs))
	got, _ := drain(late["a/#"])
	require.Equal(t, []string{"2"}, got)
}

// Until the broker has confirmed a subscription, publications skip it: the
// broker may or may not have it when their echo would come.
func TestRouterEchoUnconfirmedSubscription(t *testing.T) {
	rem := &slowSubscribe{scriptedRemote: newScriptedRemote(), entered: make(chan struct{}), release: make(chan struct{})}
	r := subscribers.NewRouter(subscribers.RouterOptions{Remote: rem})
	pub, err := r.Publisher("a")
	require.NoError(t, err)
	s := newSub(t, "a", subscribers.Options{})
	attachedErr := make(chan error, 1)
	go func() { attachedErr <- r.Attach(s) }()
	<-rem.entered
	require.NoError(t, pub.Publish([]byte("before the SUBACK")))
	require.Equal(t, subscribers.EchoStats{}, r.EchoStats(), "no echo awaited")
	close(rem.release)
	require.NoError(t, <-attachedErr)
	require.NoError(t, pub.Publish([]byte("after")))
	got, _ := drain(s)
	require.Equal(t, []string{"after"}, got)
	require.Equal(t, subscribers.EchoStats{Awaited: 1}, r.EchoStats())
}

// slowSubscribe is a remote whose Subscribe waits for release.
type slowSubscribe struct {
	*scriptedRemote
	entered, release chan struct{}
}

func (r *slowSubscribe) Subscribe(filter string, qos byte) error {
	close(r.entered)
	<-r.release
	return r.scriptedRemote.Subscribe(filter, qos)
}

// A message the remote refuses (too large, say) that is the echo of a
// local publication counts no drop for the subscriptions that had it, and
// is no longer awaited.
func TestRouterRefuseEcho(t *testing.T) {
	r, rem, subs := remoteRouter(t, subscribers.RouterOptions{}, "t")
	publishOn(t, r, "t", "p", 0)
	r.Refuse(rem.echo(0), subscribers.QueueFull)
	require.Zero(t, subs["t"].Stats().DroppedTotal())
	require.Equal(t, subscribers.EchoStats{Matched: 1}, r.EchoStats())
	foreign := subscribers.Message{Topic: "t", Payload: []byte("f"), Received: time.Now()}
	r.Refuse(&foreign, subscribers.QueueFull)
	require.EqualValues(t, 1, subs["t"].Stats().Dropped[subscribers.QueueFull])
}

// Another publisher's message with the payload of an awaited echo takes the
// echo's place: each subscription still gets each message once.
func TestRouterEchoEqualPayloadFromAnotherPublisher(t *testing.T) {
	r, rem, subs := remoteRouter(t, subscribers.RouterOptions{}, "t")
	publishOn(t, r, "t", "same", 1)
	publishOn(t, r, "t", "other", 1)
	foreign := subscribers.Message{Topic: "t", Payload: []byte("same"), QoS: 1, Received: time.Now()}
	for _, m := range []*subscribers.Message{&foreign, rem.echo(0), rem.echo(1)} {
		r.Receive(m)
	}
	got, _ := drain(subs["t"])
	require.Equal(t, []string{"same", "other", "same"}, got)
	require.Equal(t, subscribers.EchoStats{Matched: 2}, r.EchoStats())
}

// A fence gives up the echoes of QoS 0 publications handed over before
// it: a later message with the same payload is delivered. A QoS 1 echo is
// still awaited (a persistent session's broker sends it), and so is one
// handed over after the fence.
func TestRouterEchoFence(t *testing.T) {
	r, rem, subs := remoteRouter(t, subscribers.RouterOptions{}, "t")
	publishOn(t, r, "t", "q0", 0)       // hand-over 1
	publishOn(t, r, "t", "q1", 1)       // 2
	publishOn(t, r, "t", "q0 later", 0) // 3
	r.Fence(3, false)
	require.Equal(t, subscribers.EchoStats{GivenUp: 1, Awaited: 2}, r.EchoStats())
	for _, m := range []*subscribers.Message{rem.echo(0), rem.echo(1), rem.echo(2)} {
		r.Receive(m)
	}
	got, _ := drain(subs["t"])
	require.Equal(t, []string{"q0", "q1", "q0 later", "q0"}, got, "the given-up QoS 0 echo's payload is a new message")

	// A clean session's broker forgets the QoS 1 echoes too.
	publishOn(t, r, "t", "q1 clean", 1) // 4
	r.Fence(5, true)
	r.Receive(rem.echo(3))
	got, _ = drain(subs["t"])
	require.Equal(t, []string{"q1 clean", "q1 clean"}, got)
	require.Equal(t, subscribers.EchoStats{Matched: 2, GivenUp: 2}, r.EchoStats())
}

// An echo whose publication is still being handed over when a fence comes
// is not given up: it may go out on the next connection.
func TestRouterEchoSendingAcrossLoss(t *testing.T) {
	rem := &blockingRemote{scriptedRemote: newScriptedRemote(), release: make(chan struct{}), entered: make(chan struct{})}
	r := subscribers.NewRouter(subscribers.RouterOptions{Remote: rem})
	subs := attached(t, r, "t")
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = r.Publish(subscribers.Message{Topic: "t", Payload: []byte("p")})
	}()
	<-rem.entered
	r.Fence(100, true)
	close(rem.release)
	<-done
	require.Equal(t, subscribers.EchoStats{Awaited: 1}, r.EchoStats())
	r.Receive(rem.echo(0))
	got, _ := drain(subs["t"])
	require.Equal(t, []string{"p"}, got)
}

type blockingRemote struct {
	*scriptedRemote
	entered, release chan struct{}
}

func (b *blockingRemote) Publish(m subscribers.Message, sent subscribers.Sent) error {
	close(b.entered)
	<-b.release
	return b.scriptedRemote.Publish(m, sent)
}

// Awaited echoes are given up when the router receives messages that
// arrived EchoAge after them, and beyond MaxEchoes, oldest first.
func TestRouterEchoBounds(t *testing.T) {
	r, rem, subs := remoteRouter(t, subscribers.RouterOptions{EchoAge: time.Hour, MaxEchoes: 3}, "t/+")
	for i := range 5 {
		publishOn(t, r, "t/a", fmt.Sprint(i), 1)
	}
	require.Equal(t, subscribers.EchoStats{GivenUp: 2, Awaited: 3}, r.EchoStats())
	// The two oldest are delivered when they come; the others are echoes.
	for i := range 5 {
		r.Receive(rem.echo(i))
	}
	got, _ := drain(subs["t/+"])
	require.Equal(t, []string{"0", "1", "2", "3", "4", "0", "1"}, got)

	publishOn(t, r, "t/a", "old", 1)
	late := subscribers.Message{Topic: "t/b", Payload: []byte("x"), Received: time.Now().Add(2 * time.Hour)}
	r.Receive(&late)
	require.Equal(t, subscribers.EchoStats{Matched: 3, GivenUp: 3}, r.EchoStats())
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

// An echo's age counts from the publication's hand-over, not from its
// message's time stamp: a callback that passes a received message on
// unchanged publishes it with the time it first arrived, maybe long ago.
func TestRouterEchoAgeFromHandOver(t *testing.T) {
	r, rem, subs := remoteRouter(t, subscribers.RouterOptions{EchoAge: time.Minute}, "t")
	_, err := r.Publish(subscribers.Message{Topic: "t", Payload: []byte("old"), Received: time.Now().Add(-time.Hour)})
	require.NoError(t, err)
	rc := r.Receive(rem.echo(0))
	require.True(t, rc.Echo)
	got, _ := drain(subs["t"])
	require.Equal(t, []string{"old"}, got)
	require.Equal(t, subscribers.EchoStats{Matched: 1}, r.EchoStats())
}
