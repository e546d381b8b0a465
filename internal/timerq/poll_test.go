package timerq_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/internal/tsc"
	"github.com/robotexec/robotexec/waitset"
)

// deaf is the system clock with alarms that never ring: only Poll serves
// its queue's timers.
type deaf struct{ timerq.System }

type deafAlarm struct{}

func (deaf) NewAlarm(func()) timerq.Alarm { return deafAlarm{} }
func (deafAlarm) Set(time.Time)           {}
func (deafAlarm) Stop()                   {}

func TestPollServesDueTimers(t *testing.T) {
	set := waitset.New(nil, nil)
	q := timerq.NewQueue(deaf{}, set)
	defer q.Stop()
	tm, err := q.NewTimer(5*time.Millisecond, false)
	require.NoError(t, err)
	tm.Reset()
	q.Fast().Poll()
	var run waitset.List
	n, _ := set.Take(&run)
	require.Zero(t, n, "not due yet")

	deadline, ok := tm.Deadline()
	require.True(t, ok)
	time.Sleep(time.Until(deadline) + time.Millisecond)
	q.Fast().Poll()
	n, _ = set.Take(&run)
	if tsc.NsPerTick() == 0 {
		require.Zero(t, n, "no counter: Poll leaves the queue to the alarm and PollWait")
		return
	}
	require.Equal(t, 1, n, "due: served by Poll")
	require.Same(t, timerq.Entity(tm), run.Pop())
	timerq.Entity(tm).Start()
	ev, ok := timerq.Call(tm)
	require.True(t, ok)
	require.Equal(t, deadline, ev.Expected)
	timerq.Entity(tm).Finish(false)

	// Served once: polling again before the next deadline does nothing.
	q.Fast().Poll()
	n, _ = set.Take(&run)
	require.Zero(t, n)
}

func TestPollIgnoresSimulatedClocks(t *testing.T) {
	clk := timerq.NewSim(time.Unix(0, 0))
	set := waitset.New(nil, nil)
	q := timerq.NewQueue(clk, set)
	defer q.Stop()
	tm, err := q.NewTimer(time.Millisecond, false)
	require.NoError(t, err)
	tm.Reset()
	time.Sleep(2 * time.Millisecond) // real time passes, simulated time does not
	q.Fast().Poll()
	var run waitset.List
	n, _ := set.Take(&run)
	require.Zero(t, n)
}

// TestPollWaitServesDueTimers: a worker that busy-waits for a deadline
// serves it with PollWait, on the counter where it is trusted and on the
// clock where it is not; before the deadline, PollWait does nothing.
func TestPollWaitServesDueTimers(t *testing.T) {
	set := waitset.New(nil, nil)
	q := timerq.NewQueue(deaf{}, set)
	defer q.Stop()
	f := q.Fast()
	require.True(t, f.Pollable(), "a System clock's queue is polled, on the counter or on the clock")
	tm, err := q.NewTimer(5*time.Millisecond, false)
	require.NoError(t, err)
	tm.Reset()
	require.False(t, f.PollWait(), "not due yet")

	deadline, ok := tm.Deadline()
	require.True(t, ok)
	until := f.Now() + f.Ticks(time.Until(deadline))
	time.Sleep(time.Until(deadline) + time.Millisecond)
	require.GreaterOrEqual(t, f.Now(), until, "Now and Ticks measure the time that passed")
	require.True(t, f.PollWait(), "due: served")
	var run waitset.List
	n, _ := set.Take(&run)
	require.Equal(t, 1, n)
	require.Same(t, timerq.Entity(tm), run.Pop())
	timerq.Entity(tm).Start()
	ev, ok := timerq.Call(tm)
	require.True(t, ok)
	require.Equal(t, deadline, ev.Expected)
	timerq.Entity(tm).Finish(false)
	require.False(t, f.PollWait(), "served once: nothing before the next deadline")
}

func TestPollWaitIgnoresSimulatedClocks(t *testing.T) {
	clk := timerq.NewSim(time.Unix(0, 0))
	q := timerq.NewQueue(clk, waitset.New(nil, nil))
	defer q.Stop()
	require.False(t, q.Fast().Pollable())
	tm, err := q.NewTimer(time.Millisecond, false)
	require.NoError(t, err)
	tm.Reset()
	time.Sleep(2 * time.Millisecond) // real time passes, simulated time does not
	require.False(t, q.Fast().PollWait())
}
