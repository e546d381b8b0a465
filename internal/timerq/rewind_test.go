package timerq_test

// Tests of a queue on a clock that goes back (Sim.Rewind): its timers are
// re-armed on the new time, as rcl does on a backward jump of ROS time.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/timerq"
)

func TestSimRewind(t *testing.T) {
	sim := timerq.NewSim(epoch)
	var got []string
	sim.OnRewind(func(to time.Time) { got = append(got, "a "+to.Sub(epoch).String()) })
	sim.OnRewind(func(to time.Time) {
		require.Equal(t, to, sim.Now(), "the clock reads the new time")
		got = append(got, "b "+to.Sub(epoch).String())
	})
	rang := 0
	sim.NewAlarm(func() { rang++ }).Set(at(50 * ms))
	sim.AdvanceTo(at(40 * ms))

	sim.Rewind(at(10 * ms))
	require.Equal(t, at(10*ms), sim.Now())
	require.Equal(t, []string{"a 10ms", "b 10ms"}, got, "in the order given")
	require.Zero(t, rang, "no alarm fires going back")
	next, ok := sim.Next()
	require.True(t, ok)
	require.Equal(t, at(50*ms), next, "alarms keep their times")

	sim.Rewind(at(10 * ms))
	sim.Rewind(at(20 * ms))
	require.Equal(t, at(10*ms), sim.Now(), "Rewind never goes forward")
	require.Len(t, got, 2, "nor calls anything when it does not go back")
	sim.AdvanceTo(at(50 * ms))
	require.Equal(t, 1, rang)
}

// TestRewindPeriodic: a periodic timer of 100 ms called up to 1 s, when
// the clock goes back to to. The timers that were called or started after
// to start again from to; the others keep their deadlines.
func TestRewindPeriodic(t *testing.T) {
	const period = 100 * ms
	tests := []struct {
		name     string
		to       time.Duration
		wantNext time.Duration
	}{
		{"back to the start", 0, period},
		{"back to before the start", -time.Hour, -time.Hour + period},
		{"back past several calls", 450 * ms, 550 * ms},
		{"back past the last call", 950 * ms, 1050 * ms},
		{"back by 1ns, just after a call", time.Second - 1, 1100*ms - 1},
		{"back to a call's time", time.Second, 1100 * ms},
		{"back within a period of the deadline", 1050 * ms, 1100 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			tm := r.started(period, false)
			for range 10 {
				only(t, r.step(), tm)
			}
			if tt.to >= time.Second {
				r.clock.AdvanceTo(at(tt.to + ms))
				require.Empty(t, r.spin())
			}
			r.clock.Rewind(at(tt.to))
			require.Equal(t, at(tt.wantNext), deadline(t, tm))
			require.Empty(t, r.spin(), "nothing falls due going back")

			ev := only(t, r.step(), tm)
			require.Equal(t, at(tt.wantNext), ev.Expected)
			require.Equal(t, at(tt.wantNext), ev.Actual, "the alarm is set for the new deadline")
			require.Zero(t, ev.Missed)
			require.Equal(t, at(tt.wantNext+period), deadline(t, tm), "drift-free from there")

			// A jump forward after it still skips and counts.
			r.clock.AdvanceTo(at(tt.wantNext + 5*period + period/2))
			ev = only(t, r.spin(), tm)
			require.Equal(t, at(tt.wantNext+period), ev.Expected)
			require.Equal(t, uint64(4), ev.Missed)
			require.Equal(t, uint64(4), tm.Missed())
		})
	}
}

// TestRewindOrder: after the clock goes back, the timers fall due in the
// order of their new deadlines; a one-shot timer starts again from the new
// time if it started after it; a canceled timer stays canceled.
func TestRewindOrder(t *testing.T) {
	r := newRig(t)
	slow := r.started(time.Second, false)
	fast := r.started(300*ms, false)
	canceled := r.started(10*ms, false)
	canceled.Cancel()
	r.clock.AdvanceTo(at(2500 * ms))
	require.Len(t, r.spin(), 2)
	require.Equal(t, at(3*time.Second), deadline(t, slow))
	require.Equal(t, at(2700*ms), deadline(t, fast))
	once := r.started(500*ms, true) // due at 3 s
	r.clock.AdvanceTo(at(2600 * ms))
	require.Empty(t, r.spin())

	r.clock.Rewind(at(0))
	require.Equal(t, at(time.Second), deadline(t, slow))
	require.Equal(t, at(300*ms), deadline(t, fast))
	require.Equal(t, at(500*ms), deadline(t, once))
	require.True(t, canceled.Canceled())
	require.Equal(t, 3, r.q.Len())

	var order []time.Time
	for len(order) < 6 {
		for _, c := range r.step() {
			require.True(t, c.ok)
			require.Equal(t, c.ev.Expected, c.ev.Actual, "on time")
			order = append(order, c.ev.Expected)
		}
	}
	require.Equal(t, []time.Time{at(300 * ms), at(500 * ms), at(600 * ms), at(900 * ms), at(time.Second), at(1200 * ms)}, order)
	require.Equal(t, uint64(1), once.Calls())
	require.True(t, once.Canceled(), "a one-shot fires once")
	require.Zero(t, canceled.Calls())
}

// TestRewindDue: a periodic timer of 100 ms falls due at 100 ms and the
// clock goes on to at, then back to to before the timer is called. If the
// clock went back before its deadline the call is skipped, and the timer
// re-armed by the rule for the armed ones; if not, the call is made.
func TestRewindDue(t *testing.T) {
	tests := []struct {
		name     string
		at, to   time.Duration
		wantCall bool
		wantNext time.Duration // the next deadline after the call or skip
	}{
		{"back before the deadline, within a period", 100 * ms, 20 * ms, false, 100 * ms},
		{"back before the deadline, by more than a period", 100 * ms, -time.Second, false, -900 * ms},
		{"back, not before the deadline", 150 * ms, 120 * ms, true, 200 * ms},
		{"back to the deadline", 150 * ms, 100 * ms, true, 200 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			tm := r.started(100*ms, false)
			r.clock.AdvanceTo(at(tt.at))
			require.Equal(t, 1, r.wakes, "due")
			r.clock.Rewind(at(tt.to))
			calls := r.spin()
			require.Len(t, calls, 1)
			require.Equal(t, tt.wantCall, calls[0].ok)
			require.Equal(t, at(tt.wantNext), deadline(t, tm))
			if tt.wantCall {
				require.Equal(t, at(100*ms), calls[0].ev.Expected)
				require.Equal(t, at(tt.to), calls[0].ev.Actual)
				require.Equal(t, uint64(1), tm.Calls())
				return
			}
			require.Zero(t, tm.Calls(), "skipped")
			ev := only(t, r.step(), tm)
			require.Equal(t, at(tt.wantNext), ev.Expected)
			require.Equal(t, at(tt.wantNext), ev.Actual)
			require.Zero(t, ev.Missed)
		})
	}
}

// TestRewindStopped: a stopped queue ignores the clock going back.
func TestRewindStopped(t *testing.T) {
	r := newRig(t)
	tm := r.started(100*ms, false)
	r.clock.AdvanceTo(at(50 * ms))
	r.q.Stop()
	r.clock.Rewind(at(0))
	require.Zero(t, r.q.Len())
	require.True(t, tm.Canceled())
	_, ok := r.clock.Next()
	require.False(t, ok, "no alarm set")
}
