package bus_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
)

func TestPublisher(t *testing.T) {
	router := new(bus.Router)
	pub, err := router.Publisher("p/q")
	require.NoError(t, err)
	require.Equal(t, "p/q", pub.Topic())
	require.Equal(t, "publisher(p/q)", pub.String())

	s1 := newSub(t, "p/+", bus.Options{})
	s2 := newSub(t, "p/q", bus.Options{})
	s3 := newSub(t, "other", bus.Options{})

	steps := []struct {
		name   string
		change func()
		want   int
		got    []*bus.Subscription // subscriptions that receive
	}{
		{"no subscriptions", func() {}, 0, nil},
		{"attach a wildcard", func() { require.NoError(t, router.Attach(s1)) }, 1, []*bus.Subscription{s1}},
		{"cached", func() {}, 1, []*bus.Subscription{s1}},
		{"attach an exact filter", func() { require.NoError(t, router.Attach(s2)) }, 2, []*bus.Subscription{s1, s2}},
		{"attach one that does not match", func() { require.NoError(t, router.Attach(s3)) }, 2, []*bus.Subscription{s1, s2}},
		{"detach", func() { router.Detach(s1) }, 1, []*bus.Subscription{s2}},
		{"close detaches", s2.Close, 0, nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.change()
			n, err := pub.PublishMessage(context.Background(), msg("", st.name))
			require.NoError(t, err)
			require.Equal(t, st.want, n)
			for _, s := range []*bus.Subscription{s1, s2, s3} {
				m, _, ok, _ := bus.Take(s)
				if slices.Contains(st.got, s) {
					require.True(t, ok, "%s must receive", s.Filter())
					require.Equal(t, "p/q", m.Topic)
					require.Equal(t, st.name, string(m.Payload))
					require.False(t, m.Retained)
					require.Zero(t, m.QoS)
				} else {
					require.False(t, ok, "%s must not receive", s.Filter())
				}
			}
		})
	}
	require.Zero(t, s2.Stats().Dropped[bus.Closed], "a closed subscription must be detached, not refusing")

	// PublishMessage sets the topic and keeps the rest.
	s4 := newSub(t, "p/q", bus.Options{})
	require.NoError(t, router.Attach(s4))
	n, err := pub.PublishMessage(context.Background(), bus.Message{Topic: "elsewhere", Payload: []byte("m"), QoS: 2})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	m, _, ok, _ := bus.Take(s4)
	require.True(t, ok)
	require.Equal(t, "p/q", m.Topic)
	require.Equal(t, byte(2), m.QoS)
}

func TestPublisherInvalidTopic(t *testing.T) {
	router := new(bus.Router)
	for _, topic := range []string{"", "a/+", "a/#", "x\x00"} {
		t.Run(fmt.Sprintf("%q", topic), func(t *testing.T) {
			pub, err := router.Publisher(topic)
			require.Error(t, err)
			require.Nil(t, pub)
			require.Contains(t, err.Error(), strconv.Quote(topic))
		})
	}
}

// TestPublishAllocatesNothing checks the allocation promises of Publisher
// and Bus.Publish: a publication to a subscription with room allocates
// nothing.
func TestPublishAllocatesNothing(t *testing.T) {
	router := new(bus.Router)
	sub := newSub(t, "z/+", bus.Options{})
	require.NoError(t, router.Attach(sub))
	pub, err := router.Publisher("z/a")
	require.NoError(t, err)
	m := bus.Message{Topic: "z/a", Payload: []byte("payload")}
	pub.PublishMessage(context.Background(), m) // fill the publisher's cache
	bus.Take(sub)

	tests := []struct {
		name string
		f    func()
	}{
		{"Publisher.PublishMessage", func() {
			if n, _ := pub.PublishMessage(context.Background(), m); n != 1 {
				panic("not delivered")
			}
			bus.Take(sub)
		}},
		{"Publisher.Publish", func() {
			pub.Publish(context.Background(), m.Payload)
			bus.Take(sub)
		}},
		{"Bus.Publish", func() {
			if n, err := router.Publish(context.Background(), m); n != 1 || err != nil {
				panic("not delivered")
			}
			bus.Take(sub)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Zero(t, testing.AllocsPerRun(200, tt.f))
		})
	}
}

// benchPublisher returns a subscription of options opts to filter,
// attached to a new router, and a publisher on topic through it.
func benchPublisher(b *testing.B, filter, topic string, opts bus.Options) (*bus.Subscription, *bus.Publisher) {
	router := new(bus.Router)
	sub := newSub(b, filter, opts)
	if err := router.Attach(sub); err != nil {
		b.Fatal(err)
	}
	pub, err := router.Publisher(topic)
	if err != nil {
		b.Fatal(err)
	}
	return sub, pub
}

func BenchmarkPublisherPublishMessage(b *testing.B) {
	sub, pub := benchPublisher(b, "bench/+", "bench/x", bus.Options{})
	m := bus.Message{Payload: []byte("payload"), Received: time.Unix(1, 0)}
	b.ReportAllocs()
	for b.Loop() {
		pub.PublishMessage(context.Background(), m)
		bus.Take(sub)
	}
}

func BenchmarkBusPublish(b *testing.B) {
	router := new(bus.Router)
	sub := newSub(b, "bench/+", bus.Options{})
	if err := router.Attach(sub); err != nil {
		b.Fatal(err)
	}
	m := bus.Message{Topic: "bench/x", Payload: []byte("payload"), Received: time.Unix(1, 0)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := router.Publish(context.Background(), m); err != nil {
			b.Fatal(err)
		}
		bus.Take(sub)
	}
}

// BenchmarkPublishPath measures what a publication through the router adds
// to a direct delivery, on one goroutine with no worker: each op puts one
// message in a block queue of depth 256 and takes it out again. "deliver"
// hands it to the subscription (Subscription.Deliver, as BenchmarkDispatch's
// executor workload); "publish-stamped" publishes a message that has its
// time stamp (the routing alone); "publish" has the router stamp it, as
// BenchmarkDispatch's executor+bus workload does.
func BenchmarkPublishPath(b *testing.B) {
	sub, pub := benchPublisher(b, "bench/x", "bench/x", bus.Options{Depth: 256, Overflow: bus.Block})
	stamped := bus.Message{Payload: []byte("x"), Received: time.Unix(1, 0)}
	var m bus.Message
	b.Run("deliver", func(b *testing.B) {
		for b.Loop() {
			sub.Deliver(stamped)
			bus.TakeInto(sub, &m)
		}
	})
	b.Run("publish-stamped", func(b *testing.B) {
		for b.Loop() {
			pub.PublishMessage(context.Background(), stamped)
			bus.TakeInto(sub, &m)
		}
	})
	b.Run("publish", func(b *testing.B) {
		unstamped := bus.Message{Payload: []byte("x")}
		for b.Loop() {
			pub.PublishMessage(context.Background(), unstamped)
			bus.TakeInto(sub, &m)
		}
	})
}

// TestPublishToOneSubscription: a publication that only one local
// subscription gets (the publisher's shortcut past the general path) is
// refused, stamped and queued as the general path does it.
func TestPublishToOneSubscription(t *testing.T) {
	router := bus.NewRouter(bus.RouterOptions{MaxPayload: 4})
	pub, err := router.Publisher("p/q")
	require.NoError(t, err)
	s := newSub(t, "p/q", bus.Options{Depth: 1, Overflow: bus.Block})
	require.NoError(t, router.Attach(s))

	n, err := pub.PublishMessage(context.Background(), msg("", "large"))
	require.ErrorIs(t, err, bus.ErrTooLarge)
	require.Zero(t, n)
	require.EqualValues(t, 1, router.TooLarge())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n, err = pub.PublishMessage(ctx, msg("", "done"))
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, n)

	before := time.Now()
	n, err = pub.PublishMessage(context.Background(), msg("", "ok"))
	require.NoError(t, err)
	require.Equal(t, 1, n)

	// Full, with the Block policy: waited for until the context ends.
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	n, err = pub.PublishMessage(ctx, msg("", "wait"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Zero(t, n)

	m, _, ok, more := bus.Take(s)
	require.True(t, ok)
	require.False(t, more, "only the accepted publication is queued")
	require.Equal(t, "ok", string(m.Payload))
	require.Equal(t, "p/q", m.Topic)
	require.False(t, m.Received.Before(before.Add(-time.Millisecond)), "stamped when published: %v, published after %v", m.Received, before)
	require.False(t, m.Received.After(time.Now().Add(time.Millisecond)))
}
