package timerq_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/waitset"
)

// epoch is where the simulated clocks of the tests start.
var epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// call is one timer call made by rig.spin.
type call struct {
	timer *timerq.Timer
	ev    timerq.Event
	ok    bool   // what Call returned
	batch uint64 // the wait set batch the timer was taken in
}

// rig plays the scheduler and a single worker for a timer queue on a
// simulated clock.
type rig struct {
	t     testing.TB
	clock *timerq.Sim
	set   *waitset.Set
	q     *timerq.Queue
	wakes int
	run   waitset.List
}

func newRig(t testing.TB) *rig {
	r := &rig{t: t, clock: timerq.NewSim(epoch)}
	r.set = waitset.New(func() { r.wakes++ }, nil)
	r.q = timerq.NewQueue(r.clock, r.set)
	return r
}

// timer makes a timer whose entity's Data points back to it. It does not
// arm it.
func (r *rig) timer(period time.Duration, oneShot bool) *timerq.Timer {
	r.t.Helper()
	tm, err := r.q.NewTimer(period, oneShot)
	require.NoError(r.t, err)
	timerq.Entity(tm).Data = tm
	return tm
}

// started makes a timer and arms it.
func (r *rig) started(period time.Duration, oneShot bool) *timerq.Timer {
	tm := r.timer(period, oneShot)
	tm.Reset()
	return tm
}

// take moves whatever is ready into the rig's run queue and returns the
// batch number (0 if nothing was ready).
func (r *rig) take() uint64 {
	_, batch := r.set.Take(&r.run)
	return batch
}

// runQueued starts, calls and finishes everything in the run queue, in order.
func (r *rig) runQueued(batch uint64) []call {
	var calls []call
	for x := r.run.Pop(); x != nil; x = r.run.Pop() {
		tm := x.Data.(*timerq.Timer)
		require.Same(r.t, timerq.Entity(tm), x)
		x.Start()
		ev, ok := timerq.Call(tm)
		calls = append(calls, call{timer: tm, ev: ev, ok: ok, batch: batch})
		x.Finish(false)
	}
	return calls
}

// spin runs every timer that is ready, batch after batch, until none is.
func (r *rig) spin() []call {
	var calls []call
	for {
		batch := r.take()
		if batch == 0 {
			return calls
		}
		calls = append(calls, r.runQueued(batch)...)
	}
}

// advance moves the clock by d, then spins.
func (r *rig) advance(d time.Duration) []call {
	r.clock.Advance(d)
	return r.spin()
}

// step moves the clock from alarm to alarm until a ring readies a timer,
// then spins. The queue leaves its alarm set when the earliest timer is
// canceled or reset, so a ring may find nothing due and only re-arm. It
// fails if no alarm is set.
func (r *rig) step() []call {
	r.t.Helper()
	for range 100 {
		next, ok := r.clock.Next()
		require.True(r.t, ok, "no alarm set")
		r.clock.AdvanceTo(next)
		if calls := r.spin(); len(calls) > 0 {
			return calls
		}
	}
	require.FailNow(r.t, "100 rings with nothing due")
	return nil
}

// of returns the calls of tm among calls.
func of(calls []call, tm *timerq.Timer) []call {
	var out []call
	for _, c := range calls {
		if c.timer == tm {
			out = append(out, c)
		}
	}
	return out
}

// at returns the time d after the epoch.
func at(d time.Duration) time.Time { return epoch.Add(d) }

// only requires that calls holds exactly one successful call of tm and
// returns its event.
func only(t testing.TB, calls []call, tm *timerq.Timer) timerq.Event {
	t.Helper()
	require.Len(t, calls, 1)
	require.Same(t, tm, calls[0].timer)
	require.True(t, calls[0].ok)
	return calls[0].ev
}

// deadline returns the timer's deadline, failing if it has none.
func deadline(t testing.TB, tm *timerq.Timer) time.Time {
	t.Helper()
	d, ok := tm.Deadline()
	require.True(t, ok, "timer has no deadline")
	return d
}
