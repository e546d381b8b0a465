package timerq_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/waitset"
)

// leadDeaf is the system clock with a lead and alarms that never ring: a
// queue on it rings early inline (every deadline is within the lead) and
// only PollWait stages and serves its deadlines.
type leadDeaf struct{ deaf }

func (leadDeaf) Lead() time.Duration { return time.Hour }

// stagingQueue returns a queue on leadDeaf, rung early, with n timers of
// period p, not armed.
func stagingQueue(t *testing.T, n int, p time.Duration) (*timerq.Queue, *waitset.Set, []*timerq.Timer) {
	t.Helper()
	set := waitset.New(nil, nil)
	q := timerq.NewQueue(leadDeaf{}, set)
	t.Cleanup(q.Stop)
	q.Fast().SetEarly(func(time.Time, int) {})
	var tms []*timerq.Timer
	for range n {
		tm, err := q.NewTimer(p, false)
		require.NoError(t, err)
		tms = append(tms, tm)
	}
	return q, set, tms
}

// serveAt waits for deadline, serves it with PollWait and returns the
// timers it triggered, in their order.
func serveAt(t *testing.T, q *timerq.Queue, set *waitset.Set, deadline time.Time) []*waitset.Entity {
	t.Helper()
	time.Sleep(time.Until(deadline) + time.Millisecond)
	q.Fast().PollWait()
	var run waitset.List
	set.Take(&run)
	var got []*waitset.Entity
	for x := run.Pop(); x != nil; x = run.Pop() {
		got = append(got, x)
	}
	return got
}

// TestStagedTimersStayArmed: a poll ahead of the deadline takes its
// timers out of the heap; they stay armed for Len, Deadline and Cancel, and
// fall due at their deadline in ID order, without the canceled one.
func TestStagedTimersStayArmed(t *testing.T) {
	const period = time.Hour
	q, set, tms := stagingQueue(t, 3, period)
	d := time.Now().Add(300 * time.Millisecond)
	for _, tm := range tms {
		tm.ResetAt(d)
	}
	require.Zero(t, timerq.Staged(q))
	require.False(t, q.Fast().PollWait(), "before the deadline: nothing is served")
	require.Equal(t, 3, timerq.Staged(q), "the wait took the deadline's timers out of the heap")
	require.Equal(t, 3, q.Len(), "staged timers are armed")
	got, ok := tms[0].Deadline()
	require.True(t, ok)
	require.Equal(t, d, got)
	tms[1].Cancel()
	require.True(t, tms[1].Canceled())
	require.Equal(t, 2, q.Len())
	require.Equal(t, 2, timerq.Staged(q))

	fired := serveAt(t, q, set, d)
	require.Equal(t, []*waitset.Entity{timerq.Entity(tms[0]), timerq.Entity(tms[2])}, fired)
	for _, tm := range []*timerq.Timer{tms[0], tms[2]} {
		x := timerq.Entity(tm)
		x.Start()
		ev, ok := timerq.Call(tm)
		require.True(t, ok)
		require.Equal(t, d, ev.Expected)
		x.Finish(false)
	}
	require.Equal(t, 2, q.Len(), "re-armed a period later")
	next, _ := tms[2].Deadline()
	require.Equal(t, d.Add(period), next)
}

// TestStagedDeadlineMergesNewTimers: a timer armed on a staged deadline
// after the staging, and a staged timer reset elsewhere, fall due as if
// nothing had been staged: the first in ID order among the staged, the
// second at its new deadline only.
func TestStagedDeadlineMergesNewTimers(t *testing.T) {
	q, set, tms := stagingQueue(t, 4, time.Hour)
	d := time.Now().Add(300 * time.Millisecond)
	tms[0].ResetAt(d)
	tms[2].ResetAt(d)
	tms[3].ResetAt(d)
	require.False(t, q.Fast().PollWait())
	require.Equal(t, 3, timerq.Staged(q))
	tms[1].ResetAt(d)                             // after the staging
	tms[3].ResetAt(d.Add(200 * time.Millisecond)) // staged, moved later

	fired := serveAt(t, q, set, d)
	require.Equal(t, []*waitset.Entity{timerq.Entity(tms[0]), timerq.Entity(tms[1]), timerq.Entity(tms[2])}, fired)
	later, ok := tms[3].Deadline()
	require.True(t, ok)
	require.Equal(t, d.Add(200*time.Millisecond), later)
	require.Equal(t, []*waitset.Entity{timerq.Entity(tms[3])}, serveAt(t, q, set, later))
}

// TestStopDisarmsStagedTimers: Stop leaves a staged timer canceled and
// serves nothing after.
func TestStopDisarmsStagedTimers(t *testing.T) {
	q, set, tms := stagingQueue(t, 2, time.Hour)
	d := time.Now().Add(200 * time.Millisecond)
	for _, tm := range tms {
		tm.ResetAt(d)
	}
	require.False(t, q.Fast().PollWait())
	q.Stop()
	for _, tm := range tms {
		require.True(t, tm.Canceled())
	}
	require.Zero(t, q.Len())
	require.Empty(t, serveAt(t, q, set, d))
}
