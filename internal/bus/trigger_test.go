package bus_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// TestSubscriptionTrigger walks a subscription through the states of
// docs/design.md, Order per subscription, with the test as the scheduler and
// the worker: dormant (waiting, empty), ready (in the wait set), in progress
// (running).
func TestSubscriptionTrigger(t *testing.T) {
	fx := newFixture(t, "s", bus.Options{})
	sub, set, e := fx.sub, fx.set, bus.Entity(fx.sub)
	ready := func() int { return len(fx.rec.ops(trace.Ready)) }

	// Dormant.
	require.True(t, set.Empty())
	require.False(t, e.InWaitSet())
	require.Equal(t, waitset.Waiting, e.State())

	// The first delivery makes it ready.
	require.True(t, sub.Deliver(msg("s", "1")))
	require.False(t, set.Empty())
	require.True(t, e.InWaitSet())
	require.Equal(t, 1, ready())

	// A delivery while ready adds work, not a second entry.
	require.True(t, sub.Deliver(msg("s", "2")))
	require.Equal(t, 1, ready())

	var runq waitset.List
	n, batch := set.Take(&runq)
	require.Equal(t, 1, n)
	require.Equal(t, uint64(1), batch)
	require.Same(t, e, runq.Pop())
	require.Equal(t, waitset.Queued, e.State())
	require.True(t, set.Empty())

	// A delivery to a non-empty queue while queued changes nothing (seed
	// 003: only a delivery to a dormant subscription does): it is not pushed,
	// so it cannot be taken twice, and its run will find the message.
	require.True(t, sub.Deliver(msg("s", "3")))
	require.True(t, set.Empty())
	require.False(t, e.InWaitSet())

	// In progress: one message per run, from the front.
	e.Start()
	m, _, ok, more := bus.Take(sub)
	require.True(t, ok)
	require.True(t, more)
	require.Equal(t, "1", string(m.Payload))
	require.True(t, sub.Deliver(msg("s", "4")))
	require.True(t, set.Empty(), "a delivery while running must not make it ready")
	require.Equal(t, 1, ready())

	// Work left: back to ready at the end of the run.
	require.True(t, e.Finish(more))
	require.False(t, set.Empty())
	require.Equal(t, 2, ready())

	var rest []string
	for {
		runq = waitset.List{}
		if n, _ := set.Take(&runq); n == 0 {
			break
		}
		require.Same(t, e, runq.Pop())
		e.Start()
		m, _, ok, more := bus.Take(sub)
		require.True(t, ok)
		rest = append(rest, string(m.Payload))
		e.Finish(more)
	}
	require.Equal(t, []string{"2", "3", "4"}, rest)

	// Dormant again.
	require.True(t, set.Empty())
	require.False(t, e.InWaitSet())
	require.Equal(t, waitset.Waiting, e.State())
	require.Zero(t, sub.Len())
	require.Equal(t, []uint64{1, 2, 3, 4}, fx.rec.seqs(trace.Accept))
}

// runAll plays a single worker: it takes batches from set into a FIFO run
// queue and runs one message per run until every subscription is dormant.
// It returns the payloads in the order they ran.
func runAll(t *testing.T, set *waitset.Set) []string {
	t.Helper()
	var runq waitset.List
	var out []string
	for {
		if runq.Len() == 0 {
			if n, _ := set.Take(&runq); n == 0 {
				return out
			}
		}
		e := runq.Pop()
		sub := e.Data.(*bus.Subscription)
		e.Start()
		m, _, ok, more := bus.Take(sub)
		require.True(t, ok, "a ready subscription must have work")
		out = append(out, string(m.Payload))
		e.Finish(more)
	}
}

// TestSubscriptionFairness checks the back-of-queue rule (EndWorkMoreToDo,
// docs/design.md, Order per subscription): a subscription with more work
// goes to the back of the ready queue, behind those already ready, so that
// one busy subscription does not starve the others.
func TestSubscriptionFairness(t *testing.T) {
	set := waitset.New(nil, nil)
	subs := map[string]*bus.Subscription{}
	for _, name := range []string{"a", "b", "c"} {
		sub, err := bus.New(name, bus.Options{})
		require.NoError(t, err)
		bus.Entity(sub).Data = sub
		set.Register(bus.Entity(sub), waitset.Subscription)
		subs[name] = sub
	}
	for _, p := range []string{"a1", "b1", "c1", "a2", "c2", "a3"} {
		require.True(t, subs[p[:1]].Deliver(msg(p[:1], p)))
	}
	require.Equal(t, []string{"a1", "b1", "c1", "a2", "c2", "a3"}, runAll(t, set))
	for _, sub := range subs {
		require.Zero(t, sub.Len())
		require.False(t, bus.Entity(sub).InWaitSet())
	}
}
