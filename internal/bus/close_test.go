package bus_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/trace"
)

func TestClose(t *testing.T) {
	fx := newFixture(t, "c", bus.Options{Depth: 3})
	src := &fakeSource{}
	require.NoError(t, src.Attach(fx.sub))
	require.True(t, fx.sub.Deliver(msg("c", "1")))
	require.True(t, fx.sub.Deliver(msg("c", "2")))

	fx.sub.Close()
	require.True(t, fx.sub.Closed())
	require.Equal(t, []*bus.Subscription{fx.sub}, src.detachCalls(), "Close must detach from the source")

	// Later messages are refused and counted.
	require.False(t, fx.sub.Deliver(msg("c", "3")))
	require.False(t, fx.sub.Deliver(msg("c", "4")))
	st := fx.sub.Stats()
	require.Equal(t, uint64(2), st.Accepted)
	require.Equal(t, uint64(2), st.Dropped[bus.Closed])
	require.Equal(t, uint64(2), st.DroppedTotal())
	require.Equal(t, []string{"closed", "closed"}, fx.rec.reasons())
	require.Equal(t, []uint64{0, 0}, fx.rec.seqs(trace.Drop), "a refused message has no number")

	// Accepted messages still run.
	payloads, seqs := drain(fx.sub)
	require.Equal(t, []string{"1", "2"}, payloads)
	require.Equal(t, []uint64{1, 2}, seqs)

	// Close is idempotent and does not detach twice.
	fx.sub.Close()
	require.True(t, fx.sub.Closed())
	require.Len(t, src.detachCalls(), 1)
}

func TestCloseRefusesForEveryPolicy(t *testing.T) {
	for _, policy := range []bus.Policy{bus.DropOldest, bus.DropNewest, bus.Block} {
		for _, full := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s full=%v", policy, full), func(t *testing.T) {
				fx := newFixture(t, "c", bus.Options{Depth: 1, Overflow: policy})
				if full {
					require.True(t, fx.sub.Deliver(msg("c", "kept")))
				}
				fx.sub.Close()
				// Must return at once, even with Block on a full queue.
				require.False(t, fx.sub.Deliver(msg("c", "late")))
				st := fx.sub.Stats()
				require.Equal(t, uint64(1), st.Dropped[bus.Closed])
				require.Zero(t, st.Dropped[bus.QueueFull], "a closed subscription must not evict accepted messages")
				payloads, _ := drain(fx.sub)
				if full {
					require.Equal(t, []string{"kept"}, payloads)
				} else {
					require.Empty(t, payloads)
				}
			})
		}
	}
}

func TestCloseWithoutSource(t *testing.T) {
	sub := newSub(t, "c", bus.Options{})
	sub.Close()
	require.True(t, sub.Closed())
	require.False(t, sub.Deliver(msg("c", "x")))
}

// TestCloseReleasesBlockedProducers checks that producers waiting for room
// under Block return, refused and counted, when the subscription closes,
// and that the accepted message stays.
func TestCloseReleasesBlockedProducers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fx := newFixture(t, "c", bus.Options{Depth: 1, Overflow: bus.Block})
		require.True(t, fx.sub.Deliver(msg("c", "kept")))
		const producers = 3
		done := make(chan bool, producers)
		for i := range producers {
			go func() { done <- fx.sub.Deliver(msg("c", strconv.Itoa(i))) }()
		}
		synctest.Wait()
		require.Empty(t, done, "the producers must wait for room")

		fx.sub.Close()
		synctest.Wait()
		require.Len(t, done, producers, "Close must release every waiting producer")
		for range producers {
			require.False(t, <-done)
		}
		st := fx.sub.Stats()
		require.Equal(t, uint64(producers), st.Dropped[bus.Closed])
		require.Equal(t, uint64(1), st.Accepted)
		require.Equal(t, []string{"closed", "closed", "closed"}, fx.rec.reasons())
		payloads, _ := drain(fx.sub)
		require.Equal(t, []string{"kept"}, payloads)
	})
}

// TestDeliverConcurrentWithClose checks that every message a producer saw
// accepted is still in the queue after Close, however the two interleave.
func TestDeliverConcurrentWithClose(t *testing.T) {
	for round := range 20 {
		sub := newSub(t, "c", bus.Options{Depth: 1000})
		var accepted sync.WaitGroup
		counts := make(chan int, 2)
		for p := range 2 {
			accepted.Go(func() {
				n := 0
				for i := range 200 {
					if sub.Deliver(msg("c", fmt.Sprint(p, i))) {
						n++
					}
				}
				counts <- n
			})
		}
		sub.Close()
		accepted.Wait()
		close(counts)
		total := 0
		for n := range counts {
			total += n
		}
		st := sub.Stats()
		require.Equal(t, uint64(total), st.Accepted, "round %d", round)
		require.Equal(t, uint64(400-total), st.Dropped[bus.Closed])
		require.Equal(t, total, sub.Len())
	}
}
