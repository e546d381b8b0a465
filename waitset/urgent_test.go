package waitset_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/waitset"
)

// urgentSet is a set with a timer, a subscription and an urgent one.
func urgentSet() (set *waitset.Set, tm, sub, urgent *waitset.Entity) {
	set = waitset.New(nil, nil)
	tm, sub, urgent = &waitset.Entity{}, &waitset.Entity{}, &waitset.Entity{}
	urgent.SetUrgent(true)
	set.Register(tm, waitset.Timer)
	set.Register(sub, waitset.Subscription)
	set.Register(urgent, waitset.Subscription)
	return set, tm, sub, urgent
}

// Take puts urgent subscriptions after the timers and before the others,
// whatever the order they became ready in.
func TestTakeOrdersUrgentAfterTimers(t *testing.T) {
	set, tm, sub, urgent := urgentSet()
	sub.Trigger()
	urgent.Trigger()
	tm.Trigger()
	var q waitset.List
	n, batch := set.Take(&q)
	require.Equal(t, 3, n)
	require.Equal(t, uint64(1), batch)
	require.Equal(t, []*waitset.Entity{tm, urgent, sub}, []*waitset.Entity{q.Pop(), q.Pop(), q.Pop()})
	require.PanicsWithValue(t, "waitset: SetUrgent of a registered entity", func() { urgent.SetUrgent(false) })
}

// TakeAhead takes the urgent subscriptions, with the timers when asked,
// and leaves the others to the next batch; TakeWith leaves the urgent ones.
func TestTakeAheadTakesTheUrgent(t *testing.T) {
	set, tm, sub, urgent := urgentSet()
	sub.Trigger()
	urgent.Trigger()
	tm.Trigger()
	var ts, us, ss, held waitset.List
	n, _ := set.Fast().TakeAhead(nil, &us)
	require.Equal(t, 1, n, "the urgent one, not the timer")
	require.Same(t, urgent, us.Pop())
	require.Equal(t, waitset.Queued, urgent.State())
	require.True(t, set.TimersPending())

	urgent.Start()
	urgent.Trigger()
	n, _, _ = set.Fast().TakeWith(&ts, &ss, &held, nil)
	require.Equal(t, 2, n, "the timer and the subscription")
	require.Same(t, tm, ts.Pop())
	require.Same(t, sub, ss.Pop())

	// An urgent subscription that ends ready again is not held: it goes
	// back on its stack, for TakeAhead.
	require.True(t, set.Fast().FinishHeld(urgent, true))
	require.Equal(t, waitset.Waiting, urgent.State())
	set.Fast().Hold(urgent, &held)
	require.Zero(t, held.Len())
	require.False(t, set.Empty())
	n, _ = set.Fast().TakeAhead(&ts, &us)
	require.Equal(t, 1, n)
	require.Same(t, urgent, us.Pop())
	require.True(t, set.Empty())
}
