package executor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
)

// TestHandoffKeepsAPipelineOnItsWorker sends messages one at a time through
// a five-stage in-process pipeline on an otherwise idle executor. With
// hand-off, a stage's publication wakes no other worker: the publishing
// worker runs the next stage itself, so the only wake-up per message is the
// one for the message entering stage 0 from outside. Without, every stage
// wakes a parked worker.
func TestHandoffKeepsAPipelineOnItsWorker(t *testing.T) {
	const messages = 100
	wakeups := map[bool]uint64{}
	for _, handoff := range []bool{true, false} {
		ex := executor.New(executor.WithHandoff(executor.Options{Workers: 4, Logger: quiet()}, handoff))
		bus := new(subscribers.Router)
		done := make(chan struct{}, 1)
		for i := range 5 {
			o := ex.NewOwner(fmt.Sprintf("stage%d", i), nil)
			var next *subscribers.Publisher
			if i < 4 {
				p, err := bus.Publisher(fmt.Sprintf("stage/%d", i+1))
				require.NoError(t, err)
				next = p
			}
			_, err := o.Subscribe(bus, fmt.Sprintf("stage/%d", i), func(ctx context.Context, m subscribers.Message) {
				if next != nil {
					next.Publish(ctx, m.Payload)
				} else {
					done <- struct{}{}
				}
			})
			require.NoError(t, err)
		}
		stop := run(t, ex)
		send := func() {
			// Every worker parked first, so that the count of wake-ups
			// does not depend on how busy the machine is.
			deadline := time.Now().Add(10 * time.Second)
			for ex.Stats().Parked < 4 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Microsecond)
			}
			publish(t, bus, "stage/0", "x")
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("pipeline stalled")
			}
		}
		for range 5 { // warm up: every worker parked
			send()
		}
		before := ex.Stats().Wakeups
		for range messages {
			send()
		}
		wakeups[handoff] = ex.Stats().Wakeups - before
		stop()
	}
	t.Logf("wake-ups for %d messages through 5 stages: %d with hand-off, %d without", messages, wakeups[true], wakeups[false])
	// Each message entering stage 0 from outside wakes one parked worker;
	// with hand-off that worker runs every stage, waking no other; without,
	// stage 1's trigger at least wakes another.
	require.Equal(t, uint64(messages), wakeups[true])
	require.GreaterOrEqual(t, wakeups[false], uint64(2*messages))
}
