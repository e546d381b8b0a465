package bus_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/waitset"
)

// attached returns subscriptions to filters, registered with a wait set and
// attached to router, by filter.
func attached(t *testing.T, router *bus.Router, filters ...string) map[string]*bus.Subscription {
	t.Helper()
	subs := map[string]*bus.Subscription{}
	for _, f := range filters {
		s := newSub(t, f, bus.Options{Depth: 100})
		require.NoError(t, router.Attach(s))
		subs[f] = s
	}
	return subs
}

// received drains every subscription and returns, by filter, the payloads
// it held; subscriptions that held nothing are left out.
func received(subs map[string]*bus.Subscription) map[string][]string {
	out := map[string][]string{}
	for f, s := range subs {
		if p, _ := drain(s); len(p) > 0 {
			slices.Sort(p)
			out[f] = p
		}
	}
	return out
}

func TestRouterPublish(t *testing.T) {
	router := new(bus.Router)
	subs := attached(t, router, "a/b", "a/+", "a/#", "#", "+/b", "x/y", "$SYS/#", "a//b")

	tests := []struct {
		topic string
		want  []string // filters that receive the message
	}{
		{"a/b", []string{"a/b", "a/+", "a/#", "#", "+/b"}},
		{"a", []string{"a/#", "#"}},
		{"a/c", []string{"a/+", "a/#", "#"}},
		{"a/b/c", []string{"a/#", "#"}},
		{"x/y", []string{"x/y", "#"}},
		{"x/b", []string{"+/b", "#"}},
		{"a//b", []string{"a//b", "a/#", "#"}},
		{"$SYS/load", []string{"$SYS/#"}},
		{"nothing/here/at/all", []string{"#"}},
	}
	for _, tt := range tests {
		t.Run(tt.topic, func(t *testing.T) {
			n, err := router.Publish(context.Background(), msg(tt.topic, tt.topic))
			require.NoError(t, err)
			require.Equal(t, len(tt.want), n, "Publish must return how many subscriptions accepted")
			want := map[string][]string{}
			for _, f := range tt.want {
				want[f] = []string{tt.topic}
			}
			require.Equal(t, want, received(subs))
		})
	}
}

// TestBusPublishManyMatches publishes to more subscriptions than Publish
// keeps room for on its stack.
func TestRouterPublishManyMatches(t *testing.T) {
	router := new(bus.Router)
	var many []*bus.Subscription
	for i := range 20 {
		s := newSub(t, []string{"m/#", "m/+", "+/x", "#"}[i%4], bus.Options{})
		require.NoError(t, router.Attach(s))
		many = append(many, s)
	}
	miss := newSub(t, "m/y", bus.Options{})
	require.NoError(t, router.Attach(miss))
	n, err := router.Publish(context.Background(), msg("m/x", "p"))
	require.NoError(t, err)
	require.Equal(t, 20, n)
	for _, s := range many {
		require.Equal(t, 1, s.Len())
	}
	require.Zero(t, miss.Len())
}

func TestRouterPublishInvalidTopic(t *testing.T) {
	router := new(bus.Router)
	all := newSub(t, "#", bus.Options{})
	require.NoError(t, router.Attach(all))
	for _, topic := range []string{"", "a/+", "a/#", "#", "a\x00b", strings.Repeat("t", 65536)} {
		t.Run(fmt.Sprintf("%.20q", topic), func(t *testing.T) {
			n, err := router.Publish(context.Background(), bus.Message{Topic: topic, Payload: []byte("x"), Retained: true})
			require.Error(t, err)
			require.Zero(t, n)
			require.True(t, strings.HasPrefix(err.Error(), "subscribers: topic "+strconv.Quote(topic)),
				"%.100s: the error must name the topic", err)
			require.Zero(t, all.Len(), "an invalid message must not be delivered")
		})
	}
	// Nor retained.
	late := newSub(t, "#", bus.Options{})
	require.NoError(t, router.Attach(late))
	require.Zero(t, late.Len())
}

func TestRouterReceived(t *testing.T) {
	router := new(bus.Router)
	sub := newSub(t, "r/#", bus.Options{})
	require.NoError(t, router.Attach(sub))
	pub, err := router.Publisher("r/p")
	require.NoError(t, err)
	set := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

	tests := []struct {
		name    string
		publish func(m bus.Message)
	}{
		{"Bus.Publish", func(m bus.Message) {
			_, err := router.Publish(context.Background(), m)
			require.NoError(t, err)
		}},
		{"Publisher.PublishMessage", func(m bus.Message) {
			_, err := pub.PublishMessage(context.Background(), m)
			require.NoError(t, err)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" stamps a zero time", func(t *testing.T) {
			before := time.Now()
			tt.publish(msg("r/b", "x"))
			after := time.Now()
			m, _, ok, _ := bus.Take(sub)
			require.True(t, ok)
			require.False(t, m.Received.IsZero())
			// The stamp reads the time-stamp counter where it can, within
			// about 100 ns of the monotonic clock.
			const slack = 2 * time.Microsecond
			require.False(t, m.Received.Before(before.Add(-slack)) || m.Received.After(after.Add(slack)), "Received %v not in [%v, %v]", m.Received, before, after)
		})
		t.Run(tt.name+" keeps a set time", func(t *testing.T) {
			m := msg("r/b", "x")
			m.Received = set
			tt.publish(m)
			got, _, ok, _ := bus.Take(sub)
			require.True(t, ok)
			require.True(t, got.Received.Equal(set), "Received %v, want %v", got.Received, set)
		})
	}
	require.Zero(t, sub.Len())
}

func TestRouterPublishCountsAccepting(t *testing.T) {
	router := new(bus.Router)
	full := newSub(t, "c/#", bus.Options{Depth: 1, Overflow: bus.DropNewest})
	evicting := newSub(t, "c/#", bus.Options{Depth: 1, Overflow: bus.DropOldest})
	roomy := newSub(t, "c/+", bus.Options{})
	other := newSub(t, "d/#", bus.Options{})
	for _, s := range []*bus.Subscription{full, evicting, roomy, other} {
		require.NoError(t, router.Attach(s))
	}
	n, err := router.Publish(context.Background(), msg("c/1", "first"))
	require.NoError(t, err)
	require.Equal(t, 3, n)

	// full refuses now; evicting drops its oldest and accepts.
	n, err = router.Publish(context.Background(), msg("c/1", "second"))
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, uint64(1), full.Stats().Dropped[bus.QueueFull])
	require.Equal(t, uint64(1), evicting.Stats().Dropped[bus.QueueFull])

	pub, err := router.Publisher("c/1")
	require.NoError(t, err)
	n, err = pub.PublishMessage(context.Background(), msg("", "third"))
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Zero(t, other.Len())
}

func TestZeroRouter(t *testing.T) {
	var router bus.Router
	n, err := router.Publish(context.Background(), bus.Message{Topic: "z", Payload: []byte("r"), Retained: true})
	require.NoError(t, err)
	require.Zero(t, n)
	sub := newSub(t, "z", bus.Options{})
	require.NoError(t, router.Attach(sub))
	require.Equal(t, 1, sub.Len())
}

func TestRouterDetach(t *testing.T) {
	router := new(bus.Router)
	sub := newSub(t, "d", bus.Options{})
	require.NoError(t, router.Attach(sub))
	n, err := router.Publish(context.Background(), msg("d", "1"))
	require.NoError(t, err)
	require.Equal(t, 1, n)

	router.Detach(sub)
	n, err = router.Publish(context.Background(), msg("d", "2"))
	require.NoError(t, err)
	require.Zero(t, n)
	router.Detach(sub) // detaching twice is harmless

	// Close after Detach does not detach again, nor fail.
	sub.Close()
	payloads, _ := drain(sub)
	require.Equal(t, []string{"1"}, payloads)
	require.Zero(t, sub.Stats().Dropped[bus.Closed])
}

func TestRouterCloseDetaches(t *testing.T) {
	router := new(bus.Router)
	sub := newSub(t, "c/#", bus.Options{})
	require.NoError(t, router.Attach(sub))
	sub.Close()
	n, err := router.Publish(context.Background(), msg("c/x", "late"))
	require.NoError(t, err)
	require.Zero(t, n)
	require.Zero(t, sub.Stats().DroppedTotal(), "a detached subscription is not offered the message at all")
}

// TestBusConcurrent runs publishers, some through Publishers, some through
// Bus.Publish, while other goroutines attach, detach and close
// subscriptions. Under -race it checks the locking; the stable subscription
// checks that nothing is lost or reordered per publisher.
func TestRouterConcurrent(t *testing.T) {
	const publishers, each = 4, 250
	router := new(bus.Router)
	stable := newSub(t, "load/#", bus.Options{Depth: publishers * each, Overflow: bus.DropNewest})
	require.NoError(t, router.Attach(stable))

	errs := make(chan error, 16)
	report := func(err error) {
		select {
		case errs <- err:
		default: // one error is enough to fail
		}
	}
	stop := make(chan struct{})
	var churn sync.WaitGroup
	for c := range 2 {
		churn.Go(func() {
			set := waitset.New(nil, nil)
			filters := []string{"load/+", "load/#", "#", "other/+", fmt.Sprint("load/p", c)}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				s, err := bus.New(filters[i%len(filters)], bus.Options{Depth: 2})
				if err != nil {
					report(err)
					return
				}
				set.Register(bus.Entity(s), waitset.Subscription)
				if err := router.Attach(s); err != nil {
					report(err)
					return
				}
				if i%2 == 0 {
					s.Close()
				} else {
					router.Detach(s)
				}
			}
		})
	}

	var pubs sync.WaitGroup
	for p := range publishers {
		pubs.Go(func() {
			topic := fmt.Sprint("load/p", p)
			pub, err := router.Publisher(topic)
			if err != nil {
				report(err)
				return
			}
			for i := range each {
				payload := []byte(fmt.Sprintf("%d:%d", p, i))
				var n int
				if p%2 == 0 {
					n, err = pub.PublishMessage(context.Background(), bus.Message{Payload: payload})
				} else {
					n, err = router.Publish(context.Background(), bus.Message{Topic: topic, Payload: payload, Retained: i%50 == 0})
					if err != nil {
						report(err)
						return
					}
				}
				if n < 1 {
					report(fmt.Errorf("publisher %d: message %d reached %d subscriptions, want at least the stable one", p, i, n))
					return
				}
			}
		})
	}
	pubs.Wait()
	close(stop)
	churn.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	next := make([]int, publishers)
	for {
		m, _, ok, _ := bus.Take(stable)
		if !ok {
			break
		}
		var p, i int
		_, err := fmt.Sscanf(string(m.Payload), "%d:%d", &p, &i)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint("load/p", p), m.Topic)
		require.Equal(t, next[p], i, "publisher %d's messages overtook each other", p)
		next[p]++
	}
	for p, n := range next {
		require.Equal(t, each, n, "publisher %d", p)
	}
	st := stable.Stats()
	require.Equal(t, uint64(publishers*each), st.Accepted)
	require.Zero(t, st.DroppedTotal())
}
