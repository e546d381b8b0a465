package executor_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// cpuTime returns the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timerRun is one lateness measurement: n timers of period p for d, on an
// executor with clock c (nil: bare time.AfterFunc timers re-armed on
// absolute deadlines), optionally beside CPU-bound callbacks that keep every
// worker busy.
type timerRun struct {
	n      int
	period time.Duration
	d      time.Duration
	clock  timers.Clock
	loaded bool
}

func (r timerRun) measure(b *testing.B) {
	const workers = 2
	// Recording takes a slot with one atomic add, not a lock, so that
	// the harness adds little to what it measures: a thousand callbacks
	// falling due together run back to back.
	late := make([]time.Duration, int(r.d/r.period+2)*r.n)
	var recorded, missed atomic.Uint64
	record := func(d time.Duration) {
		if i := recorded.Add(1) - 1; i < uint64(len(late)) {
			late[i] = d
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	cpu0 := cpuTime()
	start := time.Now()
	if r.clock == nil {
		// The baseline: bare Go timers on drift-free deadlines.
		for range r.n {
			wg.Add(1)
			deadline := time.Now().Add(r.period)
			var t *time.Timer
			var fire func()
			fire = func() {
				now := time.Now()
				record(now.Sub(deadline))
				for deadline = deadline.Add(r.period); !deadline.After(now); deadline = deadline.Add(r.period) {
					missed.Add(1)
				}
				select {
				case <-ctx.Done():
					wg.Done()
				default:
					t.Reset(time.Until(deadline))
				}
			}
			t = time.AfterFunc(time.Until(deadline), fire)
		}
	} else {
		if _, ok := r.clock.(timers.Precise); ok {
			// Keep a processor free for the timer poller.
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers + 1))
		}
		ex := executor.New(executor.Options{Workers: workers, Clock: r.clock})
		o := ex.NewOwner("timers", ex.NewGroup("timers", executor.Reentrant))
		for range r.n {
			if _, err := o.NewTimer(r.period, func(ev timers.Event) {
				record(ev.Late())
				missed.Add(ev.Missed)
			}); err != nil {
				b.Fatal(err)
			}
		}
		if r.loaded {
			// Every worker runs 1 ms CPU-bound callbacks back to back:
			// each busy callback, once kicked, publishes its own next
			// message, so that no goroutine outside the workers makes
			// the load.
			bus := subscribers.NewBus()
			busy := ex.NewOwner("busy", ex.NewGroup("busy", executor.Reentrant))
			for i := range 2 * workers {
				topic := fmt.Sprintf("busy/%d", i)
				p, _ := busy.Publisher(bus, topic)
				if _, err := busy.Subscribe(bus, topic, func(subscribers.Message) {
					for t := time.Now(); time.Since(t) < time.Millisecond; {
					}
					if ctx.Err() == nil {
						p.Publish(nil)
					}
				}, executor.Depth(4)); err != nil {
					b.Fatal(err)
				}
				p.Publish(nil)
			}
		}
		wg.Add(1)
		go func() { defer wg.Done(); ex.Run(ctx) }()
	}
	time.Sleep(r.d)
	cancel()
	wg.Wait()
	wall := time.Since(start)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	late = late[:min(recorded.Load(), uint64(len(late)))]
	reportLatencies(b, late)
	var worst time.Duration
	for _, d := range late {
		worst = max(worst, d)
	}
	b.ReportMetric(float64(worst)/float64(time.Microsecond), "max_us")
	b.ReportMetric(100*float64(missed.Load())/float64(uint64(len(late))+missed.Load()), "missed_%")
	b.ReportMetric(100*float64(cpu)/float64(wall), "cpu_%")
}

// BenchmarkTimerLateness measures how late timer callbacks start (actual
// start minus deadline): through the executor with the precise timer
// source and with Go's timers, beside bare time.AfterFunc timers re-armed
// on absolute deadlines, in the same run. Run with -benchtime 1x; each case
// lasts 2 s. cpu_% is the process's CPU time over the wall time, in percent
// of one core.
func BenchmarkTimerLateness(b *testing.B) {
	cases := []struct {
		name   string
		n      int
		period time.Duration
		loaded bool
	}{
		{"1x1kHz", 1, time.Millisecond, false},
		{"1000x100Hz", 1000, 10 * time.Millisecond, false},
		{"1000x100Hz-busy-workers", 1000, 10 * time.Millisecond, true},
	}
	for _, c := range cases {
		for _, src := range []struct {
			name  string
			clock timers.Clock
		}{{"precise", timers.Precise{}}, {"go", timers.System{}}, {"afterfunc", nil}} {
			if src.clock == nil && c.loaded {
				continue // bare timers have no workers to keep busy
			}
			b.Run(c.name+"/"+src.name, func(b *testing.B) {
				for range b.N {
					timerRun{n: c.n, period: c.period, d: 2 * time.Second, clock: src.clock, loaded: c.loaded}.measure(b)
				}
			})
		}
	}
}
