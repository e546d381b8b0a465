package timerq_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/waitset"
)

func TestCancel(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, r *rig, tm *timerq.Timer)
	}{
		{"armed", func(t *testing.T, r *rig, tm *timerq.Timer) {
			r.clock.Advance(5 * ms)
			tm.Cancel()
			require.Equal(t, 1, r.q.Len())
			require.Empty(t, of(r.advance(time.Hour), tm))
		}},
		{"due but not taken", func(t *testing.T, r *rig, tm *timerq.Timer) {
			r.clock.Advance(10 * ms)
			require.True(t, timerq.Entity(tm).InWaitSet())
			tm.Cancel()
			calls := r.spin()
			require.Len(t, calls, 1, "the wait set still hands it out")
			require.False(t, calls[0].ok, "but Call skips it")
			require.Empty(t, of(r.advance(time.Hour), tm))
		}},
		{"taken but not started", func(t *testing.T, r *rig, tm *timerq.Timer) {
			r.clock.Advance(10 * ms)
			batch := r.take()
			require.Equal(t, waitset.Queued, timerq.Entity(tm).State())
			tm.Cancel()
			calls := r.runQueued(batch)
			require.Len(t, calls, 1)
			require.False(t, calls[0].ok)
			require.Empty(t, of(r.advance(time.Hour), tm))
		}},
		{"from its own callback", func(t *testing.T, r *rig, tm *timerq.Timer) {
			r.clock.Advance(10 * ms)
			r.take()
			x := r.run.Pop()
			require.Same(t, timerq.Entity(tm), x)
			x.Start()
			_, ok := timerq.Call(tm)
			require.True(t, ok)
			require.Equal(t, 2, r.q.Len(), "re-armed when the call starts")
			tm.Cancel()
			x.Finish(false)
			require.Equal(t, 1, r.q.Len())
			require.Empty(t, of(r.advance(time.Hour), tm))
			require.Equal(t, uint64(1), tm.Calls())
		}},
		{"twice", func(t *testing.T, r *rig, tm *timerq.Timer) {
			tm.Cancel()
			tm.Cancel()
			require.Empty(t, of(r.advance(time.Hour), tm))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			other := r.started(11*ms, false) // not due before 10ms
			tm := r.started(10*ms, false)
			tt.run(t, r, tm)
			require.True(t, tm.Canceled())
			_, ok := tm.Deadline()
			require.False(t, ok)
			require.Equal(t, waitset.Waiting, timerq.Entity(tm).State())
			require.Positive(t, other.Calls(), "other timers go on")
			require.Equal(t, 1, r.q.Len(), "only the other timer is armed")

			// Reset arms it again from now.
			now := r.clock.Now()
			tm.Reset()
			require.False(t, tm.Canceled())
			require.Equal(t, now.Add(10*ms), deadline(t, tm))
			for range 3 {
				r.clock.AdvanceTo(deadline(t, tm))
				ev := only(t, of(r.spin(), tm), tm)
				require.Equal(t, now.Add(10*ms), ev.Expected)
				now = ev.Expected
			}
		})
	}
}

func TestReset(t *testing.T) {
	tests := []struct {
		name string
		// run acts on a 10ms timer started at the epoch and returns when
		// it expects the next call.
		run func(t *testing.T, r *rig, tm *timerq.Timer) time.Duration
	}{
		{"armed, pushed later", func(t *testing.T, r *rig, tm *timerq.Timer) time.Duration {
			r.clock.Advance(7 * ms)
			tm.Reset()
			require.Empty(t, r.advance(9*ms), "not at the old deadline")
			return 17 * ms
		}},
		{"armed after the alarm rang for nothing", func(t *testing.T, r *rig, tm *timerq.Timer) time.Duration {
			r.clock.Advance(7 * ms)
			tm.Reset() // 17ms
			require.Empty(t, r.advance(8*ms))
			tm.Cancel()
			r.clock.Advance(time.Hour)
			tm.Reset() // an hour and 25ms: the alarm was stopped, Reset sets it
			next, ok := r.clock.Next()
			require.True(t, ok)
			require.Equal(t, at(time.Hour+25*ms), next)
			return time.Hour + 25*ms
		}},
		{"due but not taken", func(t *testing.T, r *rig, tm *timerq.Timer) time.Duration {
			r.clock.Advance(13 * ms) // due at 10ms
			tm.Reset()
			calls := r.spin()
			require.Len(t, calls, 1)
			require.False(t, calls[0].ok, "the due call is skipped")
			require.Equal(t, uint64(0), tm.Calls())
			return 23 * ms
		}},
		{"taken but not started", func(t *testing.T, r *rig, tm *timerq.Timer) time.Duration {
			r.clock.Advance(10 * ms)
			batch := r.take()
			r.clock.Advance(ms)
			tm.Reset()
			calls := r.runQueued(batch)
			require.Len(t, calls, 1)
			require.False(t, calls[0].ok)
			return 21 * ms
		}},
		{"due again before the skipped call runs", func(t *testing.T, r *rig, tm *timerq.Timer) time.Duration {
			r.clock.Advance(10 * ms)
			batch := r.take()
			tm.Reset()               // 20ms
			r.clock.Advance(10 * ms) // due again while still queued
			calls := r.runQueued(batch)
			ev := only(t, calls, tm)
			require.Equal(t, at(20*ms), ev.Expected, "the queued run serves the new deadline")
			calls = r.spin()
			require.Len(t, calls, 1, "the trigger while queued readies it once more")
			require.False(t, calls[0].ok, "with nothing due")
			return 30 * ms
		}},
		{"canceled", func(t *testing.T, r *rig, tm *timerq.Timer) time.Duration {
			r.clock.Advance(4 * ms)
			tm.Cancel()
			r.clock.Advance(4 * ms)
			tm.Reset()
			return 18 * ms
		}},
		{"twice", func(t *testing.T, r *rig, tm *timerq.Timer) time.Duration {
			r.clock.Advance(4 * ms)
			tm.Reset()
			r.clock.Advance(4 * ms)
			tm.Reset()
			return 18 * ms
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			tm := r.started(10*ms, false)
			want := tt.run(t, r, tm)
			require.Equal(t, at(want), deadline(t, tm))
			require.False(t, tm.Canceled())
			ev := only(t, r.step(), tm)
			require.Equal(t, at(want), ev.Expected)
			require.Equal(t, at(want), ev.Actual)
			ev = only(t, r.step(), tm)
			require.Equal(t, at(want+10*ms), ev.Expected, "periodic from the reset")
		})
	}
}

func TestDetach(t *testing.T) {
	r := newRig(t)
	a := r.started(10*ms, false)
	b := r.started(10*ms, false)
	c := r.started(20*ms, false)
	timerq.Detach(a)
	require.Equal(t, 2, r.q.Len())
	require.True(t, a.Canceled())
	a.Reset()
	a.Cancel()
	require.True(t, a.Canceled())
	_, ok := a.Deadline()
	require.False(t, ok, "a detached timer never comes back")

	r.clock.Advance(10 * ms) // b is due
	timerq.Detach(b)
	calls := r.spin()
	require.Len(t, calls, 1)
	require.False(t, calls[0].ok, "a detached due timer is skipped")
	b.Reset()
	require.Equal(t, 1, r.q.Len())

	ev := only(t, r.advance(10*ms), c)
	require.Equal(t, at(20*ms), ev.Expected)
	for range 10 {
		only(t, r.step(), c)
	}
	require.Zero(t, a.Calls())
	require.Zero(t, b.Calls())
}

// A new timer takes the number a detached one had (see Queue.pos): what is
// done to the detached timer afterwards, a second Detach included, leaves
// the new one's place in the heap alone.
func TestDetachedTimersNumberReused(t *testing.T) {
	r := newRig(t)
	a := r.started(10*ms, false)
	b := r.started(30*ms, false)
	timerq.Detach(a)
	timerq.Detach(b)
	d := r.started(10*ms, false)
	e := r.started(20*ms, false)
	require.Equal(t, 2, r.q.Len())
	for _, old := range []*timerq.Timer{a, b} {
		timerq.Detach(old)
		old.Reset()
		old.Cancel()
	}
	require.Equal(t, 2, r.q.Len(), "the detached timers touched no slot")
	ev := only(t, r.advance(10*ms), d)
	require.Equal(t, at(10*ms), ev.Expected)
	calls := r.advance(10 * ms)
	require.Len(t, calls, 2)
	require.ElementsMatch(t, []*timerq.Timer{d, e}, []*timerq.Timer{calls[0].timer, calls[1].timer})
	require.Zero(t, a.Calls())
	require.Zero(t, b.Calls())
}

func TestCallOfTimerThatIsNotDue(t *testing.T) {
	r := newRig(t)
	tm := r.timer(10*ms, false)
	_, ok := timerq.Call(tm)
	require.False(t, ok, "never armed")
	tm.Reset()
	_, ok = timerq.Call(tm)
	require.False(t, ok, "armed, not due")
	r.clock.Advance(10 * ms)
	_, ok = timerq.Call(tm)
	require.True(t, ok, "due")
	_, ok = timerq.Call(tm)
	require.False(t, ok, "a due timer is served once")
	require.Equal(t, uint64(1), tm.Calls())
}

// ResetAt arms a one-shot timer for any deadline, earlier or later than
// its delay, and at once for one that passed; a periodic timer's later
// deadlines follow its period from the new one.
func TestResetAt(t *testing.T) {
	r := newRig(t)
	tm := r.started(10*ms, true)
	tm.ResetAt(at(3 * ms))
	require.Equal(t, at(3*ms), deadline(t, tm))
	ev := only(t, r.advance(3*ms), tm)
	require.Equal(t, at(3*ms), ev.Expected)
	require.Empty(t, of(r.advance(time.Hour), tm), "a one-shot fires once")

	tm.ResetAt(at(time.Hour + 25*ms))
	ev = only(t, r.advance(25*ms), tm)
	require.Equal(t, at(time.Hour+25*ms), ev.Expected)

	tm.ResetAt(at(time.Hour)) // passed
	ev = only(t, r.step(), tm)
	require.Equal(t, at(time.Hour), ev.Expected)

	p := r.started(10*ms, false)
	want := r.clock.Now().Add(33 * ms)
	p.ResetAt(want)
	require.Equal(t, want, deadline(t, p))
	require.Empty(t, of(r.advance(32*ms), p))
	ev = only(t, r.advance(ms), p)
	require.Equal(t, want, ev.Expected)
	ev = only(t, r.advance(10*ms), p)
	require.Equal(t, want.Add(10*ms), ev.Expected, "the period follows")
}
