package executor_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

func TestTimerEventsOnSimulatedClock(t *testing.T) {
	clock := timers.NewSim(epoch)
	ex := executor.New(executor.Options{Clock: clock, Logger: quiet()})
	o := ex.NewOwner("n", nil)
	var events []timers.Event
	tm, err := o.Timer(10*time.Millisecond, func(ctx context.Context, ev timers.Event) { events = append(events, ev) })
	require.NoError(t, err)

	clock.Advance(10 * time.Millisecond)
	require.Equal(t, 1, ex.SpinSome())
	require.Equal(t, timers.Event{Expected: epoch.Add(10 * time.Millisecond), Actual: epoch.Add(10 * time.Millisecond)}, events[0])

	// 35 ms later the deadlines at 20, 30 and 40 ms have passed: one call
	// for 20 ms, the other two skipped and counted, no burst.
	clock.Advance(35 * time.Millisecond)
	require.Equal(t, 1, ex.SpinAll())
	require.Len(t, events, 2)
	require.Equal(t, epoch.Add(20*time.Millisecond), events[1].Expected)
	require.Equal(t, epoch.Add(45*time.Millisecond), events[1].Actual)
	require.Equal(t, uint64(2), events[1].Missed)
	require.Equal(t, uint64(2), tm.Missed())

	// Drift-free: the next deadline is 50 ms, not 45+10.
	clock.AdvanceTo(epoch.Add(50 * time.Millisecond))
	require.Equal(t, 1, ex.SpinSome())
	require.Equal(t, epoch.Add(50*time.Millisecond), events[2].Expected)
	require.Zero(t, events[2].Missed)
}

func TestOneShotAndCancel(t *testing.T) {
	clock := timers.NewSim(epoch)
	ex := executor.New(executor.Options{Clock: clock, Logger: quiet()})
	o := ex.NewOwner("n", nil)
	calls := 0
	tm, err := o.OneShot(5*time.Millisecond, func(ctx context.Context, _ timers.Event) { calls++ })
	require.NoError(t, err)
	clock.Advance(time.Second)
	require.Equal(t, 1, ex.SpinAll())
	require.Equal(t, 1, calls)

	tm.Reset()
	clock.Advance(5 * time.Millisecond)
	// Due, but canceled before its call starts: the run is skipped.
	tm.Cancel()
	ex.SpinAll()
	require.Equal(t, 1, calls)
	require.True(t, tm.Canceled())
}

// TestTimerKeepsFiringUnderSubscriptionFlood floods eight subscriptions from
// two producers while a timer must keep firing, and checks the starvation
// bound on the trace.
func TestTimerKeepsFiringUnderSubscriptionFlood(t *testing.T) {
	rec := &tracecheck.Recorder{}
	ex := executor.New(executor.Options{Workers: 2, Logger: quiet(), Observer: rec})
	o := ex.NewOwner("n", ex.NewGroup("r", executor.Reentrant))
	bus := new(subscribers.Router)
	const nsubs = 8
	var pubs []*subscribers.Publisher
	for i := range nsubs {
		topic := fmt.Sprintf("flood/%d", i)
		_, err := o.Subscribe(bus, topic, func(ctx context.Context, _ subscribers.Message) {
			deadline := time.Now().Add(20 * time.Microsecond)
			for time.Now().Before(deadline) {
			}
		}, executor.Depth(50))
		require.NoError(t, err)
		p, _ := bus.Publisher(topic)
		pubs = append(pubs, p)
	}
	const period = 2 * time.Millisecond
	var ticks atomic.Int64
	_, err := o.Timer(period, func(ctx context.Context, _ timers.Event) { ticks.Add(1) })
	require.NoError(t, err)

	stop := run(t, ex)
	flooding := make(chan struct{})
	var producers sync.WaitGroup
	for p := range 2 {
		producers.Add(1)
		go func() {
			defer producers.Done()
			for i := 0; ; i++ {
				select {
				case <-flooding:
					return
				default:
				}
				pubs[(i+p)%nsubs].Publish(context.Background(), []byte("x"))
			}
		}()
	}
	const flood = 300 * time.Millisecond
	begin := time.Now()
	time.Sleep(flood)
	close(flooding)
	producers.Wait()
	elapsed := time.Since(begin)
	stop()

	// The starvation bound is checked exactly, in dequeues, on the trace.
	// In time, the timer keeps firing; how often depends on the Go
	// runtime's timers, which fire tens of milliseconds late when every
	// processor is busy, so the count asked here is a floor, far below the
	// elapsed/period ticks of an idle machine.
	t.Logf("%d ticks in %v (period %v)", ticks.Load(), elapsed, period)
	require.GreaterOrEqual(t, ticks.Load(), int64(5), "timer starved under the flood")
	require.NoError(t, tracecheck.Check(rec.Steps(), tracecheck.Model{
		Workers: 2, Drained: true, Entities: nsubs + 1, Timers: 1, Batch: executor.DefaultBatch,
	}))
}

// The executor on the precise timer source fires its timers on time and,
// once Run returned, leaves no goroutine (nor the alarm's thread) behind.
func TestPreciseTimerSource(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	ex := executor.New(executor.Options{Workers: 2, Clock: timers.Precise{}, Logger: quiet()})
	var late []time.Duration
	done := make(chan struct{})
	_, err := ex.NewOwner("n", nil).Timer(time.Millisecond, func(ctx context.Context, ev timers.Event) {
		if len(late) < 50 {
			late = append(late, ev.Late())
			if len(late) == 50 {
				close(done)
			}
		}
	})
	require.NoError(t, err)
	stop := run(t, ex)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the timer did not fire 50 times")
	}
	stop()
	for _, d := range late {
		require.GreaterOrEqual(t, d, time.Duration(0), "a call before its deadline")
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), goroutines)
}
