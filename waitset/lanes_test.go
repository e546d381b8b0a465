package waitset_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// lanes is a set with two timers and two subscriptions and a wake counter.
type lanes struct {
	set        *waitset.Set
	wakes      int
	t1, t2     *waitset.Entity
	s1, s2     *waitset.Entity
	recorded   []trace.Event
	recordedOp map[trace.Op]int
}

func (l *lanes) Observe(ev trace.Event) {
	l.recorded = append(l.recorded, ev)
	l.recordedOp[ev.Op]++
}

func newLanes() *lanes {
	l := &lanes{recordedOp: map[trace.Op]int{}}
	l.set = waitset.New(func() { l.wakes++ }, l)
	l.t1, l.t2, l.s1, l.s2 = &waitset.Entity{}, &waitset.Entity{}, &waitset.Entity{}, &waitset.Entity{}
	l.set.Register(l.t1, waitset.Timer)
	l.set.Register(l.t2, waitset.Timer)
	l.set.Register(l.s1, waitset.Subscription)
	l.set.Register(l.s2, waitset.Subscription)
	return l
}

func TestTakeAheadLeavesSubscriptions(t *testing.T) {
	l := newLanes()
	require.False(t, l.set.TimersPending())
	l.s1.Trigger()
	require.False(t, l.set.TimersPending())
	l.t1.Trigger()
	l.t2.Trigger()
	require.True(t, l.set.TimersPending())

	var timers waitset.List
	n, batch := l.set.Fast().TakeAhead(&timers, &timers)
	require.Equal(t, 2, n)
	require.Equal(t, uint64(1), batch)
	require.Same(t, l.t1, timers.Pop())
	require.Same(t, l.t2, timers.Pop())
	require.False(t, l.set.TimersPending())
	require.False(t, l.set.Empty(), "the subscription is still waiting")
	n, _ = l.set.Fast().TakeAhead(&timers, &timers)
	require.Zero(t, n)

	var ts, ss waitset.List
	var count atomic.Int64
	n, batch, counted := l.set.Fast().TakeWith(&ts, &ss, nil, &count)
	require.False(t, counted, "no timer pending: nothing counted")
	require.Zero(t, count.Load())
	require.Equal(t, 1, n)
	require.Equal(t, uint64(2), batch)
	require.Zero(t, ts.Len())
	require.Same(t, l.s1, ss.Pop())
	require.Equal(t, waitset.Queued, l.s1.State())
}

func TestTriggerQuietDoesNotWake(t *testing.T) {
	l := newLanes()
	require.True(t, l.set.Fast().TriggerQuiet(l.s1))
	require.Zero(t, l.wakes)
	require.False(t, l.set.Fast().TriggerQuiet(l.s1), "set semantics")
	require.True(t, l.s2.Trigger())
	require.Equal(t, 1, l.wakes)
	var q waitset.List
	n, _ := l.set.Take(&q)
	require.Equal(t, 2, n)
}

func TestHoldKeepsReadinessOrder(t *testing.T) {
	l := newLanes()
	var q, held waitset.List
	// s1 runs; s2 becomes ready on the stack meanwhile; s1 ends ready
	// again and is held behind s2.
	l.s1.Trigger()
	l.set.Take(&q)
	x := q.Pop()
	x.Start()
	l.s2.Trigger()
	require.True(t, l.set.Fast().FinishHeld(x, true))
	l.set.Fast().Hold(x, &held)
	require.Equal(t, 2, held.Len(), "the stack moved to held first")
	require.True(t, l.set.Empty())

	// A timer that ends ready again goes to the timers' stack.
	l.t1.Trigger()
	var tq waitset.List
	l.set.Fast().TakeAhead(&tq, &tq)
	y := tq.Pop()
	y.Start()
	y.Trigger()
	require.True(t, l.set.Fast().FinishHeld(y, false))
	l.set.Fast().Hold(y, &held)
	require.True(t, l.set.TimersPending())

	var ts, ss waitset.List
	var count atomic.Int64
	n, _, counted := l.set.Fast().TakeWith(&ts, &ss, &held, &count)
	require.True(t, counted, "a timer taken: counted")
	require.Equal(t, int64(1), count.Load())
	require.Equal(t, 3, n)
	require.Same(t, l.t1, ts.Pop())
	require.Same(t, l.s2, ss.Pop())
	require.Same(t, l.s1, ss.Pop())
	require.Zero(t, held.Len())
}

func TestMuteKeepsAnEntityUnscheduled(t *testing.T) {
	l := newLanes()
	var q waitset.List
	l.s1.Trigger()
	l.set.Take(&q)
	x := q.Pop()
	x.Start()
	x.Mute()
	require.True(t, x.Muted())
	require.False(t, x.Finish(true), "muted: not ready again")
	require.True(t, l.set.Empty())
	require.False(t, x.Trigger(), "a trigger keeps it in the wait set, unscheduled")
	require.True(t, x.Unmute(), "unmuted and waiting in the wait set: ready")
	require.False(t, x.Unmute(), "not muted any more")
	require.False(t, l.set.Empty())

	// Unmuting a running entity only clears the mute; its run's end
	// decides.
	l.set.Take(&q)
	x = q.Pop()
	x.Start()
	x.Mute()
	require.False(t, x.Unmute())
	require.False(t, x.Muted())
	require.False(t, l.set.Fast().FinishHeld(x, false))

	// A muted entity triggered by TriggerAll or TriggerQuiet is not pushed
	// either.
	l.t1.Mute()
	l.set.TriggerAll([]*waitset.Entity{l.t1})
	require.False(t, l.set.TimersPending())
	l.s2.Mute()
	require.False(t, l.set.Fast().TriggerQuiet(l.s2))
	for _, op := range []trace.Op{trace.Request, trace.Acquire, trace.Release, trace.Mute, trace.Unmute} {
		require.NotEqual(t, "invalid", op.String())
	}
	require.Equal(t, "invalid", trace.Op(0).String())
}
