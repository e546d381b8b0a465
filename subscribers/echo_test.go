package subscribers_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/subscribers"
)

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
