package timerq_test

import (
	"math"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/waitset"
)

// openFiles counts the process's open file descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(fds)
}

// settle waits until cond holds, for at most 10 s.
func settle(cond func() bool) bool {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

func TestPreciseAlarmRingsAtItsDeadlinesAndNotBefore(t *testing.T) {
	require.True(t, timerq.PreciseSupported(), "this machine runs Linux")
	rang := make(chan time.Time, 10)
	a := timerq.Precise{}.NewAlarm(func() { rang <- time.Now() })
	defer a.(interface{ Close() error }).Close()
	for range 5 {
		deadline := time.Now().Add(2 * time.Millisecond)
		a.Set(deadline)
		select {
		case at := <-rang:
			require.False(t, at.Before(deadline), "rang %v before its deadline", deadline.Sub(at))
		case <-time.After(5 * time.Second):
			t.Fatal("the alarm did not ring")
		}
	}
	// Reset to a later time replaces the earlier setting; Stop disarms.
	a.Set(time.Now().Add(time.Hour))
	a.Set(time.Now().Add(time.Millisecond))
	select {
	case <-rang:
	case <-time.After(5 * time.Second):
		t.Fatal("the alarm did not ring after a reset")
	}
	a.Set(time.Now().Add(20 * time.Millisecond))
	a.Stop()
	select {
	case <-rang:
		t.Fatal("a stopped alarm rang")
	case <-time.After(60 * time.Millisecond):
	}
	// A time in the past rings at once.
	a.Set(time.Now().Add(-time.Second))
	select {
	case <-rang:
	case <-time.After(5 * time.Second):
		t.Fatal("an alarm set in the past did not ring")
	}
}

// A queue on the precise clock starts timers on its grid, and its Stop
// releases the alarm's goroutine and descriptor.
func TestPreciseQueueGridAndStop(t *testing.T) {
	goroutines, files := runtime.NumGoroutine(), openFiles(t)
	fired := make(chan struct{}, 100)
	set := waitset.New(func() {
		select {
		case fired <- struct{}{}:
		default:
		}
	}, nil)
	q := timerq.NewQueue(timerq.Precise{}, set)
	tm, err := q.NewTimer(3*time.Millisecond+7*time.Microsecond, false)
	require.NoError(t, err)
	tm.Reset()
	deadline, ok := tm.Deadline()
	require.True(t, ok)
	require.Zero(t, deadline.UnixNano()%int64(timerq.PreciseGrid), "first deadline on the grid")
	select {
	case <-fired:
	case <-time.After(5 * time.Second):
		t.Fatal("the timer did not fall due")
	}
	var l waitset.List
	n, _ := set.Take(&l)
	require.Equal(t, 1, n)
	x := l.Pop()
	x.Start()
	ev, ok := timerq.Call(tm)
	require.True(t, ok)
	require.False(t, ev.Actual.Before(ev.Expected))
	x.Finish(false)

	q.Stop()
	require.True(t, settle(func() bool { return runtime.NumGoroutine() <= goroutines }), "the alarm's goroutine exits")
	require.Equal(t, files, openFiles(t), "the timerfd is closed")
}

// Timers started on the precise clock's grid fall due together, at most
// PreciseGroup on one deadline: the first PreciseGroup timers started
// together share a deadline on the grid, to the nanosecond of the
// monotonic clock however the wall clock drifts between their starts; the
// next PreciseGroup share the deadline a PreciseStep later, and so on.
// One-shot deadlines are on the step, and take no part in the groups.
func TestPreciseGridDeadlinesCoincide(t *testing.T) {
	set := waitset.New(func() {}, nil)
	q := timerq.NewQueue(timerq.Precise{}, set)
	defer q.Stop()
	const n = 3*timerq.PreciseGroup + 10
	var prev time.Time
	count, groups := 0, 0
	for i := range n {
		tm, err := q.NewTimer(time.Hour, false)
		require.NoError(t, err)
		tm.Reset()
		d, ok := tm.Deadline()
		require.True(t, ok)
		require.Zero(t, d.UnixNano()%int64(timerq.PreciseStep), "deadline %d on the step", i)
		switch {
		case d.Equal(prev):
			count++
			require.LessOrEqual(t, count, timerq.PreciseGroup, "timers on deadline %d", i)
		case i > 0 && count == timerq.PreciseGroup && d.Sub(prev) == timerq.PreciseStep:
			// The group is full: a step later.
			count = 1
			groups++
		default:
			// The first, or the registrations reached the next grid
			// point: a group of its own on the grid.
			require.True(t, d.After(prev), "deadline %d", i)
			require.Zero(t, d.UnixNano()%int64(timerq.PreciseGrid), "deadline %d on the grid", i)
			count = 1
			groups++
		}
		prev = d

		one, err := q.NewTimer(time.Hour+time.Nanosecond, true)
		require.NoError(t, err)
		one.Reset()
		d, ok = one.Deadline()
		require.True(t, ok)
		require.Zero(t, d.UnixNano()%int64(timerq.PreciseStep), "one-shot deadline %d on the step", i)
	}
	require.GreaterOrEqual(t, groups, n/timerq.PreciseGroup+1)
}

// A timer reset, canceled or detached before its first deadline no longer
// counts among that deadline's group: resetting one timer over and over,
// or starting and canceling timers, never moves a start off the grid.
func TestPreciseGroupCountsTimersThatStay(t *testing.T) {
	set := waitset.New(func() {}, nil)
	q := timerq.NewQueue(timerq.Precise{}, set)
	defer q.Stop()
	tm, err := q.NewTimer(time.Hour, false)
	require.NoError(t, err)
	for i := range 3 * timerq.PreciseGroup {
		switch i % 3 {
		case 0:
			tm.Reset()
		case 1:
			tm.Cancel()
			tm.Reset()
		case 2:
			o, err := q.NewTimer(time.Hour, false)
			require.NoError(t, err)
			o.Reset()
			timerq.Detach(o)
			tm.Reset()
		}
		d, ok := tm.Deadline()
		require.True(t, ok)
		require.Zero(t, d.UnixNano()%int64(timerq.PreciseGrid), "start %d on the grid", i)
	}
}

// A one-shot timer of the longest delay, as a delay meaning "never", stays
// in the future on the grid: rounding its deadline must not overflow.
func TestPreciseGridLongestDelayStaysInTheFuture(t *testing.T) {
	rang := make(chan struct{}, 1)
	set := waitset.New(func() {
		select {
		case rang <- struct{}{}:
		default:
		}
	}, nil)
	q := timerq.NewQueue(timerq.Precise{}, set)
	defer q.Stop()
	time.Sleep(time.Millisecond) // now past the queue's base, as in any real use
	tm, err := q.NewTimer(time.Duration(math.MaxInt64), true)
	require.NoError(t, err)
	tm.Reset()
	d, ok := tm.Deadline()
	require.True(t, ok)
	require.True(t, d.After(time.Now().Add(100*365*24*time.Hour)), "deadline %v", d)
	select {
	case <-rang:
		t.Fatal("the timer fell due at once")
	case <-time.After(50 * time.Millisecond):
	}
}
