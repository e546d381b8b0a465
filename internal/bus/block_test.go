package bus_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// TestBlockWaitsForRoom proves with synctest that a Block producer waits
// while the queue is full: synctest.Wait returns only once the producer is
// durably blocked (in sync.Cond.Wait), so no sleep is involved.
func TestBlockWaitsForRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fx := newFixture(t, "b", bus.Options{Depth: 2, Overflow: bus.Block})
		require.True(t, fx.sub.Deliver(msg("b", "1")))
		require.True(t, fx.sub.Deliver(msg("b", "2")))

		done := make(chan bool, 1)
		go func() { done <- fx.sub.Deliver(msg("b", "3")) }()
		synctest.Wait()
		select {
		case <-done:
			require.FailNow(t, "Deliver returned although the queue was full")
		default:
		}
		require.Equal(t, 2, fx.sub.Len())
		require.Empty(t, fx.rec.ops(trace.Drop), "Block must not drop")

		m, seq, ok, more := bus.Take(fx.sub)
		require.True(t, ok)
		require.True(t, more)
		require.Equal(t, "1", string(m.Payload))
		require.Equal(t, uint64(1), seq)

		synctest.Wait()
		select {
		case accepted := <-done:
			require.True(t, accepted)
		default:
			require.FailNow(t, "Take did not release the waiting producer")
		}
		payloads, seqs := drain(fx.sub)
		require.Equal(t, []string{"2", "3"}, payloads)
		require.Equal(t, []uint64{2, 3}, seqs)
		st := fx.sub.Stats()
		require.Equal(t, uint64(3), st.Accepted)
		require.Zero(t, st.DroppedTotal())
	})
}

// TestBlockReleasesOneProducerPerSlot checks that each Take lets exactly one
// waiting producer in, and that they are all accepted in the end.
func TestBlockReleasesOneProducerPerSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sub := newSub(t, "b", bus.Options{Depth: 1, Overflow: bus.Block})
		require.True(t, sub.Deliver(msg("b", "first")))
		const producers = 4
		done := make(chan string, producers)
		for i := range producers {
			p := fmt.Sprint("p", i)
			go func() {
				if sub.Deliver(msg("b", p)) {
					done <- p
				} else {
					done <- "refused " + p
				}
			}()
		}
		synctest.Wait()
		require.Empty(t, done)

		got := map[string]bool{}
		taken := []string{}
		for i := range producers {
			m, _, ok, _ := bus.Take(sub)
			require.True(t, ok)
			taken = append(taken, string(m.Payload))
			synctest.Wait()
			require.Len(t, done, 1, "take %d must release exactly one producer", i)
			p := <-done
			require.False(t, strings.HasPrefix(p, "refused"), p)
			got[p] = true
			require.Equal(t, 1, sub.Len())
		}
		m, _, ok, more := bus.Take(sub)
		require.True(t, ok)
		require.False(t, more)
		taken = append(taken, string(m.Payload))
		require.Len(t, got, producers)
		require.Equal(t, "first", taken[0])
		require.ElementsMatch(t, []string{"p0", "p1", "p2", "p3"}, taken[1:])
		require.Zero(t, sub.Stats().DroppedTotal())
	})
}

// TestBlockRealScheduler is TestBlockWaitsForRoom without synctest, on the
// real scheduler: the timed select is only a negative check (it can let a
// broken Block pass on a very slow machine, but never fails a correct one).
func TestBlockRealScheduler(t *testing.T) {
	sub := newSub(t, "b", bus.Options{Depth: 1, Overflow: bus.Block})
	require.True(t, sub.Deliver(msg("b", "1")))
	done := make(chan bool, 1)
	go func() { done <- sub.Deliver(msg("b", "2")) }()
	select {
	case <-done:
		require.FailNow(t, "Deliver returned although the queue was full")
	case <-time.After(20 * time.Millisecond):
	}
	_, _, ok, _ := bus.Take(sub)
	require.True(t, ok)
	select {
	case accepted := <-done:
		require.True(t, accepted)
	case <-time.After(10 * time.Second): // a failure bound only
		require.FailNow(t, "Take did not release the waiting producer")
	}
	m, _, ok, _ := bus.Take(sub)
	require.True(t, ok)
	require.Equal(t, "2", string(m.Payload))
}

// TestBlockManyProducers runs producers against a small Block queue and a
// consumer that behaves like an executor worker, woken through the wait
// set: nothing is lost, nothing dropped, and each producer's messages stay
// in order.
func TestBlockManyProducers(t *testing.T) {
	const producers, each = 4, 300
	wake := make(chan struct{}, 1)
	set := waitset.New(func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}, nil)
	sub, err := bus.New("load/+", bus.Options{Depth: 2, Overflow: bus.Block})
	require.NoError(t, err)
	set.Register(bus.Entity(sub), waitset.Subscription)
	t.Cleanup(sub.Close) // releases the producers if the test fails early

	errs := make(chan error, producers)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				if !sub.Deliver(msg("load/x", fmt.Sprintf("%d:%d", p, i))) {
					errs <- fmt.Errorf("producer %d: message %d refused", p, i)
					return
				}
			}
		})
	}

	next := make([]int, producers)
	var runq waitset.List
	deadline := time.After(20 * time.Second) // a failure bound only
	for got := 0; got < producers*each; {
		if runq.Len() == 0 {
			if n, _ := set.Take(&runq); n == 0 {
				select {
				case <-wake:
				case err := <-errs:
					require.NoError(t, err)
				case <-deadline:
					require.FailNow(t, "no progress: a trigger was lost", "got %d of %d", got, producers*each)
				}
				continue
			}
		}
		e := runq.Pop()
		require.Same(t, bus.Entity(sub), e)
		e.Start()
		m, _, ok, more := bus.Take(sub)
		require.True(t, ok)
		var p, i int
		_, err := fmt.Sscanf(string(m.Payload), "%d:%d", &p, &i)
		require.NoError(t, err)
		require.Equal(t, next[p], i, "producer %d's messages overtook each other", p)
		next[p]++
		got++
		e.Finish(more)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	st := sub.Stats()
	require.Equal(t, uint64(producers*each), st.Accepted)
	require.Zero(t, st.DroppedTotal())
	require.Zero(t, st.Queued)
}
