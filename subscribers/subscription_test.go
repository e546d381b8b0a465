package subscribers_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/waitset"
	"github.com/robotexec/robotexec/subscribers"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name   string
		filter string
		opts   subscribers.Options
		want   subscribers.Options
	}{
		{"defaults", "a/b", subscribers.Options{}, subscribers.Options{Depth: subscribers.DefaultDepth, Threshold: subscribers.DefaultDepth}},
		{"depth one", "a/#", subscribers.Options{Depth: 1}, subscribers.Options{Depth: 1, Threshold: 1}},
		{"drop newest", "#", subscribers.Options{Depth: 5, Overflow: subscribers.DropNewest}, subscribers.Options{Depth: 5, Overflow: subscribers.DropNewest, Threshold: 5}},
		{"block", "+", subscribers.Options{Overflow: subscribers.Block}, subscribers.Options{Depth: subscribers.DefaultDepth, Overflow: subscribers.Block, Threshold: subscribers.DefaultDepth}},
		{"threshold", "+", subscribers.Options{Depth: 8, Threshold: 4}, subscribers.Options{Depth: 8, Threshold: 4}},
		{"threshold above depth", "+", subscribers.Options{Depth: 8, Threshold: 40}, subscribers.Options{Depth: 8, Threshold: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := subscribers.New(tt.filter, tt.opts)
			require.NoError(t, err)
			require.Equal(t, tt.filter, sub.Filter())
			require.Equal(t, tt.want, sub.Options())
			require.Zero(t, sub.Len())
			require.False(t, sub.Closed())
			require.Equal(t, subscribers.Stats{}, sub.Stats())
			require.Nil(t, sub.Set(), "New must not register the subscription")
		})
	}
	require.Equal(t, 10, subscribers.DefaultDepth)

	_, err := subscribers.New("a/+", subscribers.Options{Depth: -3})
	require.ErrorContains(t, err, `"a/+": depth -3 is negative`)
	_, err = subscribers.New("a/+", subscribers.Options{Threshold: -1})
	require.ErrorContains(t, err, `"a/+": threshold -1 is negative`)
}

func TestNewInvalidFilter(t *testing.T) {
	for _, filter := range []string{"", "a/#/b", "a+", "a\x00"} {
		t.Run(strconv.Quote(filter), func(t *testing.T) {
			sub, err := subscribers.New(filter, subscribers.Options{})
			require.Error(t, err)
			require.Nil(t, sub)
			require.Contains(t, err.Error(), strconv.Quote(filter))
		})
	}
}

// TestDefaultDepth checks that a subscription without a depth really holds
// DefaultDepth messages.
func TestDefaultDepth(t *testing.T) {
	sub := newSub(t, "a", subscribers.Options{Overflow: subscribers.DropNewest})
	for i := range subscribers.DefaultDepth {
		require.True(t, sub.Deliver(msg("a", strconv.Itoa(i))), "message %d", i)
	}
	require.False(t, sub.Deliver(msg("a", "over")))
	require.Equal(t, subscribers.DefaultDepth, sub.Len())
}

func TestSubscriptionFIFO(t *testing.T) {
	for _, depth := range []int{1, 3, 10, 64} {
		t.Run(fmt.Sprint("depth ", depth), func(t *testing.T) {
			fx := newFixture(t, "a/+", subscribers.Options{Depth: depth, Overflow: subscribers.DropNewest})
			// Several rounds so that the ring wraps around.
			next, want := 0, 0
			for round := range 5 {
				n := 1 + (round*7)%depth
				for range n {
					require.True(t, fx.sub.Deliver(msg("a/b", strconv.Itoa(next))))
					next++
				}
				for i := range n {
					m, seq, ok, more := fx.sub.Take()
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
			sub := newSub(t, "t", subscribers.Options{})
			for i := range tt.delivered {
				sub.Deliver(subscribers.Message{Topic: "t", Payload: []byte{byte(i)}, QoS: 1, Retained: true, Received: time.Unix(int64(i), 0)})
			}
			for i, wantOK := range tt.takes {
				m, seq, ok, more := sub.Take()
				require.Equal(t, wantOK, ok, "take %d", i)
				if !wantOK {
					require.Equal(t, subscribers.Message{}, m)
					require.Zero(t, seq)
					require.False(t, more)
					continue
				}
				// The message comes back exactly as delivered.
				require.Equal(t, subscribers.Message{Topic: "t", Payload: []byte{byte(i)}, QoS: 1, Retained: true, Received: time.Unix(int64(i), 0)}, m)
				require.Equal(t, uint64(i+1), seq)
				require.Equal(t, i < tt.delivered-1, more)
				require.Equal(t, tt.delivered-i-1, sub.Len())
			}
		})
	}
}

func TestDrop(t *testing.T) {
	for _, r := range subscribers.Reasons {
		t.Run(r.String(), func(t *testing.T) {
			fx := newFixture(t, "d", subscribers.Options{})
			fx.sub.Drop(r)
			fx.sub.Drop(r)
			st := fx.sub.Stats()
			require.Equal(t, uint64(2), st.Dropped[r])
			require.Equal(t, uint64(2), st.DroppedTotal())
			require.Zero(t, st.Accepted)
			require.Equal(t, []string{r.String(), r.String()}, fx.rec.reasons())
			require.Equal(t, []uint64{0, 0}, fx.rec.seqs(waitset.Drop))
			require.True(t, fx.set.Empty(), "a drop must not make the subscription ready")
		})
	}
}

// TestDropUnregistered checks that counting a drop needs no wait set.
func TestDropUnregistered(t *testing.T) {
	sub, err := subscribers.New("d", subscribers.Options{})
	require.NoError(t, err)
	sub.Drop(subscribers.Malformed)
	require.Equal(t, uint64(1), sub.Stats().Dropped[subscribers.Malformed])
}

// TestDeliverUnregistered checks that delivering to a subscription that is
// not registered with a wait set panics with a clear message, and leaves the
// subscription usable (not locked) for the recovering caller.
func TestDeliverUnregistered(t *testing.T) {
	const want = "subscribers: Deliver to a subscription not registered with a wait set"
	tests := []struct {
		name    string
		deliver func(*subscribers.Subscription)
	}{
		{"Deliver", func(s *subscribers.Subscription) { s.Deliver(msg("u", "x")) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := subscribers.New("u", subscribers.Options{})
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
	sub, err := subscribers.New("u", subscribers.Options{})
	require.NoError(t, err)
	bus := new(subscribers.Router)
	_, err = bus.Publish(subscribers.Message{Topic: "u", Payload: []byte("r"), Retained: true})
	require.NoError(t, err)
	require.ErrorIs(t, bus.Attach(sub), subscribers.ErrUnregistered)
	n, err := bus.Publish(msg("u", "x"))
	require.NoError(t, err)
	require.Zero(t, n, "not attached")
}

func TestStats(t *testing.T) {
	fx := newFixture(t, "s", subscribers.Options{Depth: 2, Overflow: subscribers.DropNewest})
	for i := range 3 {
		fx.sub.Deliver(msg("s", strconv.Itoa(i)))
	}
	fx.sub.Drop(subscribers.TooLarge)
	want := subscribers.Stats{Accepted: 2, Queued: 2}
	want.Dropped[subscribers.QueueFull] = 1
	want.Dropped[subscribers.TooLarge] = 1
	require.Equal(t, want, fx.sub.Stats())

	fx.sub.Take()
	want.Queued = 1
	require.Equal(t, want, fx.sub.Stats(), "Take changes only Queued")
}
