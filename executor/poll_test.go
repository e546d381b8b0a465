package executor_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/tsc"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// TestBusyWorkersServeDueTimers keeps the only worker busy with callbacks
// that publish their own next message, on a clock whose alarms never ring:
// the timer still fires, because the worker serves due timers between
// callbacks, ahead of the queued subscription.
func TestBusyWorkersServeDueTimers(t *testing.T) {
	if tsc.NsPerTick() == 0 {
		t.Log("no trusted time-stamp counter: polling is off, the alarm alone serves timers")
	}
	ex := executor.NewDeaf(executor.Options{Workers: 1})
	o := ex.NewOwner("busy", nil)
	bus := new(subscribers.Router)
	p, err := bus.Publisher("loop")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = o.Subscribe(bus, "loop", func(ctx context.Context, _ subscribers.Message) {
		for t := time.Now(); time.Since(t) < 200*time.Microsecond; {
		}
		if ctx.Err() == nil {
			p.Publish(ctx, nil)
		}
	})
	require.NoError(t, err)
	fired := make(chan timers.Event, 100)
	_, err = o.Timer(2*time.Millisecond, func(ctx context.Context, ev timers.Event) {
		select {
		case fired <- ev:
		default:
		}
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	p.Publish(ctx, nil)

	var got []timers.Event
	timeout := time.After(10 * time.Second)
	for len(got) < 5 && tsc.NsPerTick() != 0 {
		select {
		case ev := <-fired:
			got = append(got, ev)
		case <-timeout:
			t.Fatalf("the timer fired %d times in 10 s", len(got))
		}
	}
	for i := 1; i < len(got); i++ {
		require.True(t, got[i].Expected.After(got[i-1].Expected), "calls serve later and later deadlines")
	}
	if tsc.NsPerTick() == 0 {
		select {
		case <-fired:
			t.Fatal("the timer fired with polling off and an alarm that never rings")
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	require.NoError(t, <-done)
}

// TestPreciseWatchdogReset: a one-shot timer reset before it falls due
// (a watchdog) fires on the precise timer source, whose queue rings early.
func TestPreciseWatchdogReset(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 2, Clock: timers.Precise{}, Logger: quiet()})
	o := ex.NewOwner("watchdog", nil)
	fired := make(chan struct{}, 1)
	tm, err := o.OneShot(5*time.Millisecond, func(ctx context.Context, _ timers.Event) { fired <- struct{}{} })
	require.NoError(t, err)
	stop := run(t, ex)
	defer stop()
	time.Sleep(2 * time.Millisecond)
	tm.Reset()
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("the watchdog never fired after its reset")
	}
}

// TestPolledTimerWakesAWorker: a worker running a mutually exclusive
// group's queue polls the timers between the group's callbacks; a timer
// it serves there must not wait for the group's next callback while
// another worker sleeps: the next callback waits for the timer, which
// fires on the other worker.
func TestPolledTimerWakesAWorker(t *testing.T) {
	if tsc.NsPerTick() == 0 {
		t.Log("no trusted time-stamp counter: the alarm serves the timer")
	}
	ex := executor.NewDeaf(executor.Options{Workers: 2, Logger: quiet()})
	if tsc.NsPerTick() == 0 {
		ex = executor.New(executor.Options{Workers: 2, Logger: quiet()})
	}
	g := ex.NewOwner("group", ex.NewGroup("g", executor.MutuallyExclusive))
	bus := new(subscribers.Router)
	fired := make(chan struct{})
	start := time.Now()
	_, err := ex.NewOwner("timer", nil).OneShot(20*time.Millisecond, func(ctx context.Context, _ timers.Event) { close(fired) })
	require.NoError(t, err)
	var timedOut atomic.Bool
	_, err = g.Subscribe(bus, "first", func(ctx context.Context, _ subscribers.Message) {
		// The other worker queued "second" on the group and parked;
		// the timer falls due while this callback runs.
		for ex.Stats().Parked < 1 || time.Since(start) < 25*time.Millisecond {
			time.Sleep(100 * time.Microsecond)
		}
	})
	require.NoError(t, err)
	_, err = g.Subscribe(bus, "second", func(ctx context.Context, _ subscribers.Message) {
		select {
		case <-fired:
		case <-time.After(10 * time.Second):
			timedOut.Store(true)
		}
	})
	require.NoError(t, err)
	stop := run(t, ex)
	first, _ := bus.Publisher("first")
	second, _ := bus.Publisher("second")
	first.Publish(context.Background(), nil)
	second.Publish(context.Background(), nil)
	select {
	case <-fired:
	case <-time.After(20 * time.Second):
		t.Fatal("the timer never fired")
	}
	stop()
	require.False(t, timedOut.Load(), "the timer waited for the group's callback")
}

// leadSim is a simulated clock with a lead, as Precise has one: the
// executor must not busy-wait for its deadlines, which are not the machine's
// time.
type leadSim struct{ *timers.Sim }

func (leadSim) Lead() time.Duration { return 100 * time.Microsecond }

func TestNoEarlyBusyWaitOnSimulatedClocks(t *testing.T) {
	clk := leadSim{timers.NewSim(time.Now())}
	ex := executor.New(executor.Options{Workers: 1, Clock: clk, Logger: quiet()})
	_, err := ex.NewOwner("o", nil).OneShot(time.Hour, func(ctx context.Context, _ timers.Event) {})
	require.NoError(t, err)
	stop := run(t, ex)
	time.Sleep(10 * time.Millisecond)
	clk.Advance(time.Hour - 50*time.Microsecond) // within the lead
	time.Sleep(10 * time.Millisecond)
	t0 := time.Now()
	stop()
	require.Less(t, time.Since(t0), 5*time.Second, "a worker busy-waited toward a simulated deadline")
}
