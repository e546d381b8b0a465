package executor_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/timers"
)

// TestSimTimerReArmedAfterTheAdvance: a running executor on a simulated
// clock that a goroutine advances, 10 ms at a time, as fast as it can, to
// 400 ms: the 100 ms timer's last call is for 400 ms. Its worker re-arms
// it after the advances have passed its next deadlines; an alarm set for
// a time the clock has reached fires then, where it used to wait for an
// advance that never came (the last call was the first, at 100 ms, in
// every run).
func TestSimTimerReArmedAfterTheAdvance(t *testing.T) {
	for range 20 {
		t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
		sim := timers.NewSim(t0)
		ex := executor.New(executor.Options{Workers: 2, Clock: sim})
		var last atomic.Int64
		_, err := ex.NewOwner("n", nil).Timer(100*time.Millisecond, func(ctx context.Context, ev timers.Event) {
			last.Store(ev.Expected.Sub(t0).Milliseconds())
		})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- ex.Run(ctx) }()
		for k := 1; k <= 40; k++ {
			sim.AdvanceTo(t0.Add(time.Duration(k) * 10 * time.Millisecond))
		}
		for deadline := time.Now().Add(5 * time.Second); last.Load() != 400 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		require.Equal(t, int64(400), last.Load(), "the last call's deadline, in ms after the start")
		cancel()
		require.NoError(t, <-done)
	}
}
