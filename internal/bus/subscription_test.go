package bus_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/trace"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name   string
		filter string
		opts   bus.Options
		want   bus.Options
	}{
		{"defaults", "a/b", bus.Options{}, bus.Options{Depth: bus.DefaultDepth, Threshold: bus.DefaultDepth}},
		{"depth one", "a/#", bus.Options{Depth: 1}, bus.Options{Depth: 1, Threshold: 1}},
		{"drop newest", "#", bus.Options{Depth: 5, Overflow: bus.DropNewest}, bus.Options{Depth: 5, Overflow: bus.DropNewest, Threshold: 5}},
		{"block", "+", bus.Options{Overflow: bus.Block}, bus.Options{Depth: bus.DefaultDepth, Overflow: bus.Block, Threshold: bus.DefaultDepth}},
		{"threshold", "+", bus.Options{Depth: 8, Threshold: 4}, bus.Options{Depth: 8, Threshold: 4}},
		{"threshold above depth", "+", bus.Options{Depth: 8, Threshold: 40}, bus.Options{Depth: 8, Threshold: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := bus.New(tt.filter, tt.opts)
			require.NoError(t, err)
			require.Equal(t, tt.filter, sub.Filter())
			require.Equal(t, tt.want, sub.Options())
			require.Zero(t, sub.Len())
			require.False(t, sub.Closed())
			require.Equal(t, bus.Stats{}, sub.Stats())
			require.Nil(t, bus.Entity(sub).Set(), "New must not register the subscription")
		})
	}
	require.Equal(t, 10, bus.DefaultDepth)

	_, err := bus.New("a/+", bus.Options{Depth: -3})
	require.ErrorContains(t, err, `"a/+": depth -3 is negative`)
	_, err = bus.New("a/+", bus.Options{Threshold: -1})
	require.ErrorContains(t, err, `"a/+": threshold -1 is negative`)
}

func TestNewInvalidFilter(t *testing.T) {
	for _, filter := range []string{"", "a/#/b", "a+", "a\x00"} {
		t.Run(strconv.Quote(filter), func(t *testing.T) {
			sub, err := bus.New(filter, bus.Options{})
			require.Error(t, err)
			require.Nil(t, sub)
			require.Contains(t, err.Error(), strconv.Quote(filter))
		})
	}
}

// TestDefaultDepth checks that a subscription without a depth really holds
// DefaultDepth messages.
func TestDefaultDepth(t *testing.T) {
	sub := newSub(t, "a", bus.Options{Overflow: bus.DropNewest})
	for i := range bus.DefaultDepth {
		require.True(t, sub.Deliver(msg("a", strconv.Itoa(i))), "message %d", i)
	}
	require.False(t, sub.Deliver(msg("a", "over")))
	require.Equal(t, bus.DefaultDepth, sub.Len())
}

func TestSubscriptionFIFO(t *testing.T) {
	for _, depth := range []int{1, 3, 10, 64} {
		t.Run(fmt.Sprint("depth ", depth), func(t *testing.T) {
			fx := newFixture(t, "a/+", bus.Options{Depth: depth, Overflow: bus.DropNewest})
			// Several rounds so that the ring wraps around.
			next, want := 0, 0
			for round := range 5 {
				n := 1 + (round*7)%depth
				for range n {
					require.True(t, fx.sub.Deliver(msg("a/b", strconv.Itoa(next))))
					next++
				}
				for i := range n {
					m, seq, ok, more := bus.Take(fx.sub)
					require.True(t, ok)
					require.Equal(t, strconv.Itoa(want), string(m.Payload))
					require.Equal(t, "a/b", m.Topic)
					require.Equal(t, uint64(want+1), seq, "sequence numbers count accepted messages from 1")
					require.Equal(t, i < n-1, more)
					want++
				}
			}
			require.Equal(t, uint64(next), fx.sub.Stats().Accepted)
		})
	}
}

func TestSubscriptionTake(t *testing.T) {
	tests := []struct {
		name      string
		delivered int
		takes     []bool // ok of each Take; more is true unless it is the last ok
	}{
		{"empty", 0, []bool{false, false}},
		{"one", 1, []bool{true, false}},
		{"three", 3, []bool{true, true, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub := newSub(t, "t", bus.Options{})
			for i := range tt.delivered {
				sub.Deliver(bus.Message{Topic: "t", Payload: []byte{byte(i)}, QoS: 1, Retained: true, Received: time.Unix(int64(i), 0)})
			}
			for i, wantOK := range tt.takes {
				m, seq, ok, more := bus.Take(sub)
				require.Equal(t, wantOK, ok, "take %d", i)
				if !wantOK {
					require.Equal(t, bus.Message{}, m)
					require.Zero(t, seq)
					require.False(t, more)
					continue
				}
				// The message comes back exactly as delivered.
				require.Equal(t, bus.Message{Topic: "t", Payload: []byte{byte(i)}, QoS: 1, Retained: true, Received: time.Unix(int64(i), 0)}, m)
				require.Equal(t, uint64(i+1), seq)
				require.Equal(t, i < tt.delivered-1, more)
				require.Equal(t, tt.delivered-i-1, sub.Len())
			}
		})
	}
}

func TestDrop(t *testing.T) {
	for _, r := range bus.Reasons {
		t.Run(r.String(), func(t *testing.T) {
			fx := newFixture(t, "d", bus.Options{})
			fx.sub.Drop(r)
			fx.sub.Drop(r)
			st := fx.sub.Stats()
			require.Equal(t, uint64(2), st.Dropped[r])
			require.Equal(t, uint64(2), st.DroppedTotal())
			require.Zero(t, st.Accepted)
			require.Equal(t, []string{r.String(), r.String()}, fx.rec.reasons())
			require.Equal(t, []uint64{0, 0}, fx.rec.seqs(trace.Drop))
			require.True(t, fx.set.Empty(), "a drop must not make the subscription ready")
		})
	}
}

// TestDropUnregistered checks that counting a drop needs no wait set.
func TestDropUnregistered(t *testing.T) {
	sub, err := bus.New("d", bus.Options{})
	require.NoError(t, err)
	sub.Drop(bus.Malformed)
	require.Equal(t, uint64(1), sub.Stats().Dropped[bus.Malformed])
}

// TestDeliverUnregistered checks that delivering to a subscription that is
// not registered with a wait set panics with a clear message, and leaves the
// subscription usable (not locked) for the recovering caller.
func TestDeliverUnregistered(t *testing.T) {
	const want = "subscribers: Deliver to a subscription not registered with a wait set"
	tests := []struct {
		name    string
		deliver func(*bus.Subscription)
	}{
		{"Deliver", func(s *bus.Subscription) { s.Deliver(msg("u", "x")) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := bus.New("u", bus.Options{})
			require.NoError(t, err)
			require.PanicsWithValue(t, want, func() { tt.deliver(sub) })

			done := make(chan int, 1)
			go func() {
				sub.Close()
				done <- sub.Len()
			}()
			select {
			case n := <-done:
				require.Zero(t, n)
			case <-time.After(10 * time.Second): // a failure bound only
				require.FailNow(t, "the panic left the subscription locked")
			}
		})
	}
}

// TestAttachUnregistered: a router refuses to attach a subscription that is
// not registered with a wait set, so that no delivery to it (a retained
// message, an MQTT client's intake) panics later.
func TestAttachUnregistered(t *testing.T) {
	sub, err := bus.New("u", bus.Options{})
	require.NoError(t, err)
	router := new(bus.Router)
	_, err = router.Publish(context.Background(), bus.Message{Topic: "u", Payload: []byte("r"), Retained: true})
	require.NoError(t, err)
	require.ErrorIs(t, router.Attach(sub), bus.ErrUnregistered)
	n, err := router.Publish(context.Background(), msg("u", "x"))
	require.NoError(t, err)
	require.Zero(t, n, "not attached")
}

func TestStats(t *testing.T) {
	fx := newFixture(t, "s", bus.Options{Depth: 2, Overflow: bus.DropNewest})
	for i := range 3 {
		fx.sub.Deliver(msg("s", strconv.Itoa(i)))
	}
	fx.sub.Drop(bus.TooLarge)
	want := bus.Stats{Accepted: 2, Queued: 2}
	want.Dropped[bus.QueueFull] = 1
	want.Dropped[bus.TooLarge] = 1
	require.Equal(t, want, fx.sub.Stats())

	bus.Take(fx.sub)
	want.Queued = 1
	require.Equal(t, want, fx.sub.Stats(), "Take changes only Queued")
}
