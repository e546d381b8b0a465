package timers_test

import (
	"context"
	"fmt"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/timers"
)

// ExampleSim runs a 100ms timer of an executor on a simulated clock. A
// call that comes late skips the deadlines that passed and counts them,
// so the timer never fires a burst and stays on its grid.
func ExampleSim() {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := timers.NewSim(start)
	ex := executor.New(executor.Options{Clock: clock})
	tick, err := ex.NewOwner("ticker", nil).Timer(100*time.Millisecond, func(ctx context.Context, ev timers.Event) {
		fmt.Printf("expected %v, ran at %v, missed %d\n", ev.Expected.Sub(start), ev.Actual.Sub(start), ev.Missed)
	})
	if err != nil {
		panic(err)
	}
	clock.Advance(100 * time.Millisecond)
	ex.SpinAll()
	clock.Advance(350 * time.Millisecond) // due at 200ms, run at 450ms
	ex.SpinAll()
	next, _ := tick.Deadline()
	fmt.Printf("calls %d, missed %d, next %v\n", tick.Calls(), tick.Missed(), next.Sub(start))
	// Output:
	// expected 100ms, ran at 100ms, missed 0
	// expected 200ms, ran at 450ms, missed 2
	// calls 2, missed 2, next 500ms
}

// ExamplePreciseSupported picks the clock of precise timers where it is.
func ExamplePreciseSupported() {
	var clock timers.Clock = timers.System{}
	if timers.PreciseSupported() {
		clock = timers.Precise{}
	}
	ex := executor.New(executor.Options{Clock: clock})
	fmt.Println(ex.Clock() == clock)
	// Run returns once its context ends and the queues are drained; a
	// Precise clock's alarm is closed then.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fmt.Println(ex.Run(ctx))
	// Output:
	// true
	// <nil>
}
