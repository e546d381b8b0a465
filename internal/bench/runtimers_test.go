package bench

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The run group's timer rows, at small sizes: they check what is
// recorded, not how late.

const (
	testRunTimers = 20
	testRunPeriod = 5 * time.Millisecond
	testRunWindow = 200 * time.Millisecond
)

// requireRunLateness checks l, a run of testRunTimers timers for
// testRunWindow: deadlines recorded, none more than the window holds.
func requireRunLateness(t *testing.T, l RunLateness) {
	t.Helper()
	require.Positive(t, l.Calls)
	require.LessOrEqual(t, l.Calls+l.Missed, uint64(testRunTimers*(testRunWindow/testRunPeriod+1)), "only the window's deadlines")
	require.GreaterOrEqual(t, l.P99, l.P50)
	if _, ok := runQueueWait(); ok {
		require.GreaterOrEqual(t, l.Waited, time.Duration(0))
	} else {
		require.Equal(t, time.Duration(-1), l.Waited)
	}
}

func TestTimerLatenessRun(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	l, err := TimerLatenessRun(context.Background(), 2, testRunTimers, testRunPeriod, testRunWindow)
	require.NoError(t, err)
	requireRunLateness(t, l)
	require.Equal(t, procs, runtime.GOMAXPROCS(0), "the app's GOMAXPROCS is restored")
}

func TestTimerLatenessRunAfterFunc(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	l, err := TimerLatenessRunAfterFunc(context.Background(), 2, testRunTimers, testRunPeriod, testRunWindow)
	require.NoError(t, err)
	requireRunLateness(t, l)
	require.Zero(t, l.Missed, "the baseline serves every deadline")
	require.Equal(t, procs, runtime.GOMAXPROCS(0), "the app's GOMAXPROCS is restored")
}

// TestTimerLatenessRunEnds: a run whose context ends stops with its error,
// long before its window.
func TestTimerLatenessRunEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, f := range map[string]func(context.Context, int, int, time.Duration, time.Duration) (RunLateness, error){
		"node": TimerLatenessRun, "baseline": TimerLatenessRunAfterFunc,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f(ctx, 1, testRunTimers, testRunPeriod, time.Hour)
			require.ErrorIs(t, err, context.Canceled)
		})
	}
}

func TestRunTimersConfig(t *testing.T) {
	cfg, err := runTimersConfig(3)
	require.NoError(t, err)
	require.Equal(t, 3, cfg.Executor.Workers)
	require.Equal(t, "precise", cfg.Executor.TimerSource, "robotexec run's default")
	require.Positive(t, cfg.Executor.GCHeadroom, "robotexec run's default GC pacing")
	require.Equal(t, "127.0.0.1:0", cfg.MQTT.Listen)
}

func TestWorstRepetition(t *testing.T) {
	for _, c := range []struct {
		name   string
		values []float64
		want   float64
		ok     bool
	}{
		{"none missed", []float64{0, 0, 0}, 0, true},
		{"one repetition missed", []float64{0, 3045, 0}, 3045, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := worstRepetition(NewMetric(specRunTimerMissed, c.values, []float64{0, 0, 0}))
			require.Equal(t, c.want, m.Value)
			require.NotNil(t, m.OK)
			require.Equal(t, c.ok, *m.OK)
			require.Equal(t, c.values, m.Samples.Value, "every repetition's figure is kept")
		})
	}
	failed := worstRepetition(Failed(specRunTimerMissed, errors.New("no broker")))
	require.Nil(t, failed.OK)
	require.Equal(t, "no broker", failed.Error)
}

func TestLateWindow(t *testing.T) {
	from := time.Unix(100, 0)
	w := &lateWindow{from: from, to: from.Add(time.Second)}
	require.False(t, w.holds(from), "the warm-up's last deadline is not recorded")
	require.True(t, w.holds(from.Add(time.Nanosecond)))
	require.True(t, w.holds(from.Add(time.Second)))
	require.False(t, w.holds(from.Add(time.Second+time.Nanosecond)))
	require.False(t, (*lateWindow)(nil).holds(from.Add(time.Millisecond)), "nothing is recorded before the window is set")
}
