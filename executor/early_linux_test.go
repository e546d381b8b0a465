package executor_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/timers"
)

// The timer queue's early ring wakes a parked worker for each timer due
// at its deadline, as many as are parked, and never a priority worker
// (timers run on the others): the second worker of two timers' work is
// running when the deadline comes, instead of waking when the first
// worker's publication asks for it.
func TestEarlyRingWakesAWorkerPerTimer(t *testing.T) {
	for _, tt := range []struct {
		workers, priority, due int
		woken                  uint64
	}{
		{2, 0, 1, 1}, {2, 0, 2, 2}, {2, 0, 5, 2}, {3, 0, 2, 2},
		{2, 1, 1, 1}, {2, 1, 3, 2}, {1, 2, 4, 1},
	} {
		t.Run(fmt.Sprintf("%d workers, %d priority workers, %d due", tt.workers, tt.priority, tt.due), func(t *testing.T) {
			ex := executor.New(executor.Options{Workers: tt.workers, PriorityWorkers: tt.priority, Clock: timers.Precise{}, Logger: quiet()})
			stop := run(t, ex)
			defer stop()
			all := tt.workers + tt.priority
			waitFor(t, func() bool { return ex.Stats().Parked == all }, "every worker parks")
			before := ex.Stats().Wakeups
			executor.EarlyRing(ex, time.Now().Add(200*time.Microsecond), tt.due)
			require.Equal(t, tt.woken, ex.Stats().Wakeups-before, "workers woken at once")
			waitFor(t, func() bool { return ex.Stats().Parked == all }, "the woken workers park again after the deadline")
		})
	}
}

// waitFor waits up to 10 s for cond.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(100 * time.Microsecond) {
		require.True(t, time.Now().Before(deadline), "%s: not within 10 s", what)
	}
}
