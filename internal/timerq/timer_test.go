package timerq_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/waitset"
)

const ms = time.Millisecond

func TestNewTimer(t *testing.T) {
	tests := []struct {
		name    string
		period  time.Duration
		oneShot bool
		wantErr string
	}{
		{"periodic", 10 * ms, false, ""},
		{"periodic 1ns", 1, false, ""},
		{"periodic zero", 0, false, "timers: period 0s is not positive"},
		{"periodic negative", -time.Second, false, "timers: period -1s is not positive"},
		{"one-shot", 10 * ms, true, ""},
		{"one-shot zero delay", 0, true, ""},
		{"one-shot negative", -ms, true, "timers: delay -1ms is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			tm, err := r.q.NewTimer(tt.period, tt.oneShot)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				require.Nil(t, tm)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.period, tm.Period())
			require.Equal(t, tt.oneShot, tm.OneShot())
			require.Same(t, r.set, timerq.Entity(tm).Set(), "registered with the queue's wait set")
			require.Equal(t, waitset.Timer, timerq.Entity(tm).Kind())
			require.NotZero(t, tm.ID())

			// A new timer is not armed until Reset.
			require.True(t, tm.Canceled())
			_, ok := tm.Deadline()
			require.False(t, ok)
			require.Zero(t, r.q.Len())
			_, ok = r.clock.Next()
			require.False(t, ok, "no alarm for an unarmed timer")
			require.Empty(t, r.advance(time.Hour))
			require.Zero(t, tm.Calls())
			require.Zero(t, tm.Missed())
		})
	}
}

func TestNewQueue(t *testing.T) {
	set := waitset.New(nil, nil)
	require.Equal(t, timerq.Clock(timerq.System{}), timerq.NewQueue(nil, set).Clock(), "nil means the system clock")
	sim := timerq.NewSim(epoch)
	require.Same(t, sim, timerq.NewQueue(sim, set).Clock())
}

func TestEventLate(t *testing.T) {
	ev := timerq.Event{Expected: at(10 * ms), Actual: at(13 * ms)}
	require.Equal(t, 3*ms, ev.Late())
	require.Zero(t, timerq.Event{Expected: at(ms), Actual: at(ms)}.Late())
}

// TestPeriodicDriftFree checks over 10,000 periods that every deadline is
// exactly the start plus a whole number of periods, however late within a
// period the calls are.
func TestPeriodicDriftFree(t *testing.T) {
	const periods = 10_000
	tests := []struct {
		name   string
		period time.Duration
		offset time.Duration // when the timer is reset, after the epoch
		// lateness returns how long after deadline k the call is made; it
		// stays below a period, so nothing is missed.
		lateness func(rng *rand.Rand, period time.Duration) time.Duration
	}{
		{"1ms on time", ms, 0, nil},
		{"odd period on time", 7*ms/3 + 1, 3*ms + 1, nil},
		{"1h on time", time.Hour, 0, nil},
		{"1ms, late by up to a period", ms, 5 * time.Microsecond,
			func(rng *rand.Rand, p time.Duration) time.Duration { return time.Duration(rng.Int64N(int64(p))) }},
		{"odd period, late by up to a period", 999_999_937, 0,
			func(rng *rand.Rand, p time.Duration) time.Duration { return time.Duration(rng.Int64N(int64(p))) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			r := newRig(t)
			r.clock.Advance(tt.offset)
			start := r.clock.Now()
			tm := r.started(tt.period, false)
			// Plain comparisons in the loop keep 50,000 steps fast under
			// -race; require reports the first mismatch.
			var prevActual time.Time
			for k := 1; k <= periods; k++ {
				want := start.Add(time.Duration(k) * tt.period)
				if d, ok := tm.Deadline(); !ok || !d.Equal(want) {
					require.Equal(t, want, d, "period %d: deadline", k)
				}
				next, ok := r.clock.Next()
				if !ok || !next.Equal(want) {
					require.Equal(t, want, next, "period %d: the alarm is set for the deadline", k)
				}
				r.clock.AdvanceTo(next)
				var late time.Duration
				if tt.lateness != nil {
					late = tt.lateness(rng, tt.period)
					r.clock.Advance(late)
				}
				calls := r.spin()
				if len(calls) != 1 || !calls[0].ok {
					require.Len(t, calls, 1, "period %d", k)
					require.True(t, calls[0].ok, "period %d", k)
				}
				ev := calls[0].ev
				if !ev.Expected.Equal(want) || !ev.Actual.Equal(want.Add(late)) || ev.Missed != 0 ||
					ev.Late() >= tt.period || !ev.Actual.After(prevActual) {
					require.Equal(t, timerq.Event{Expected: want, Actual: want.Add(late)}, ev, "period %d", k)
					require.Greater(t, ev.Actual, prevActual, "period %d", k)
				}
				prevActual = ev.Actual
			}
			require.Equal(t, uint64(periods), tm.Calls())
			require.Zero(t, tm.Missed())
		})
	}
}

// TestMissedTicks checks rcl's rule: a call more than a period late skips
// the deadlines that have passed and counts them, and the timer is re-armed
// for the first deadline that has not passed, so it never fires a burst.
func TestMissedTicks(t *testing.T) {
	const period = 10 * ms
	tests := []struct {
		name       string
		late       time.Duration // how late the call of the first deadline is
		wantMissed uint64
		wantNext   time.Duration // the next deadline, after the epoch
	}{
		{"on time", 0, 0, 20 * ms},
		{"late by less than a period", 9 * ms, 0, 20 * ms},
		{"late by exactly a period", period, 0, 20 * ms},
		{"late by a period and 1ns", period + 1, 1, 30 * ms},
		{"late by 2.5 periods", 25 * ms, 2, 40 * ms},
		{"late by exactly 3 periods", 3 * period, 2, 40 * ms},
		{"late by 1000 periods and a half", 1000*period + 5*ms, 1000, 10*ms + 1001*period},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			tm := r.started(period, false)
			r.clock.Advance(period)
			require.Equal(t, 1, r.wakes, "due at its deadline")
			r.clock.Advance(tt.late)
			ev := only(t, r.spin(), tm)
			require.Equal(t, at(period), ev.Expected)
			require.Equal(t, at(period+tt.late), ev.Actual)
			require.Equal(t, tt.late, ev.Late())
			require.Equal(t, tt.wantMissed, ev.Missed)
			require.Equal(t, tt.wantMissed, tm.Missed())
			require.Equal(t, at(tt.wantNext), deadline(t, tm))
			require.Equal(t, uint64(1), tm.Calls())

			// No burst: the skipped deadlines are not served. The next
			// call serves the next deadline, on time.
			require.Empty(t, r.spin())
			ev = only(t, r.step(), tm)
			require.Equal(t, at(tt.wantNext), ev.Expected)
			require.Equal(t, at(tt.wantNext), ev.Actual)
			require.Zero(t, ev.Missed)
			require.Equal(t, tt.wantMissed, tm.Missed())
			require.Equal(t, at(tt.wantNext+period), deadline(t, tm))
			require.Equal(t, uint64(2), tm.Calls())
		})
	}
}

func TestMissedAccumulates(t *testing.T) {
	r := newRig(t)
	tm := r.started(10*ms, false)
	var missed uint64
	for i, late := range []time.Duration{35 * ms, 0, 12 * ms, 99 * ms, 1} {
		next, ok := r.clock.Next()
		require.True(t, ok)
		r.clock.AdvanceTo(next)
		r.clock.Advance(late)
		ev := only(t, r.spin(), tm)
		missed += ev.Missed
		require.Equal(t, missed, tm.Missed(), "call %d", i)
		require.Equal(t, time.Duration(0), ev.Expected.Sub(epoch)%(10*ms), "call %d: on the grid", i)
	}
	require.Equal(t, uint64(3+0+1+9+0), missed)
}

func TestOneShot(t *testing.T) {
	r := newRig(t)
	tm := r.started(5*ms, true)
	require.Equal(t, at(5*ms), deadline(t, tm))
	require.False(t, tm.Canceled())
	require.Equal(t, 1, r.q.Len())

	require.Empty(t, r.advance(5*ms-1))
	ev := only(t, r.advance(1), tm)
	require.Equal(t, at(5*ms), ev.Expected)
	require.Zero(t, ev.Missed)
	require.True(t, tm.Canceled(), "a called one-shot timer is done")
	_, ok := tm.Deadline()
	require.False(t, ok)
	require.Zero(t, r.q.Len())
	require.Empty(t, r.advance(time.Hour), "fires once")
	require.Equal(t, uint64(1), tm.Calls())

	// Reset re-arms it from now; a late call misses nothing.
	tm.Reset()
	require.Equal(t, at(time.Hour+10*ms), deadline(t, tm))
	r.clock.Advance(time.Hour)
	ev = only(t, r.spin(), tm)
	require.Equal(t, at(time.Hour+10*ms), ev.Expected)
	require.Zero(t, ev.Missed)
	require.Zero(t, tm.Missed())
	require.Empty(t, r.advance(time.Hour))
	require.Equal(t, uint64(2), tm.Calls())
}

func TestOneShotZeroDelay(t *testing.T) {
	r := newRig(t)
	r.clock.Advance(ms)
	tm := r.started(0, true)
	require.Equal(t, at(ms), deadline(t, tm), "due at once")
	require.Empty(t, r.spin(), "not before the clock's alarm rings")
	ev := only(t, r.advance(0), tm)
	require.Equal(t, at(ms), ev.Expected)
	require.Equal(t, at(ms), ev.Actual)
	require.Empty(t, r.advance(time.Hour))
}
