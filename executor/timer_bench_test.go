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
// worker busy. The timers start one after the other as fast as they can,
// or, with spread, evenly over one period, as the timers of nodes started
// at different times have all phases.
type timerRun struct {
	n      int
	period time.Duration
	d      time.Duration
	clock  timers.Clock
	loaded bool
	spread bool
}

// pace waits, with spread, until the i-th timer's start: i periods/n
// after t0 (busy-waiting: a sleep would round to whole milliseconds).
func (r timerRun) pace(i int, t0 time.Time) {
	for r.spread && time.Since(t0) < time.Duration(i)*r.period/time.Duration(r.n) {
	}
}

func (r timerRun) measure(b *testing.B) {
	const workers = 2
	// Each timer records into a log of its own, on cache lines of its
	// own: a timer's calls never overlap, so recording needs no atomic
	// and no line moves between the workers, and the harness adds little
	// to what it measures (a thousand callbacks falling due together run
	// back to back).
	logs := make([]*timerLog, r.n)
	for i := range logs {
		logs[i] = &timerLog{late: make([]time.Duration, 0, int(r.d/r.period)+2)}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	if r.clock == nil {
		// The baseline: bare Go timers on drift-free deadlines.
		t0 := time.Now()
		for i := range r.n {
			r.pace(i, t0)
			log := logs[i]
			wg.Add(1)
			deadline := time.Now().Add(r.period)
			var t *time.Timer
			var fire func()
			fire = func() {
				now := time.Now()
				log.record(now.Sub(deadline), 0)
				for deadline = deadline.Add(r.period); !deadline.After(now); deadline = deadline.Add(r.period) {
					log.missed++
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
		t0 := time.Now()
		for i, log := range logs {
			r.pace(i, t0)
			if _, err := o.Timer(r.period, func(ctx context.Context, ev timers.Event) {
				log.record(ev.Late(), ev.Missed)
			}); err != nil {
				b.Fatal(err)
			}
		}
		if r.loaded {
			// Every worker runs 1 ms CPU-bound callbacks back to back:
			// each busy callback, once kicked, publishes its own next
			// message, so that no goroutine outside the workers makes
			// the load.
			bus := new(subscribers.Router)
			busy := ex.NewOwner("busy", ex.NewGroup("busy", executor.Reentrant))
			for i := range 2 * workers {
				topic := fmt.Sprintf("busy/%d", i)
				p, _ := bus.Publisher(topic)
				if _, err := busy.Subscribe(bus, topic, func(ctx context.Context, _ subscribers.Message) {
					for t := time.Now(); time.Since(t) < time.Millisecond; {
					}
					if ctx.Err() == nil {
						p.Publish(ctx, nil)
					}
				}, executor.Depth(4)); err != nil {
					b.Fatal(err)
				}
				p.Publish(ctx, nil)
			}
		}
		wg.Add(1)
		go func() { defer wg.Done(); ex.Run(ctx) }()
	}
	// The cpu is that of the steady state: from a few periods after the
	// timers start to just before they stop, so that neither making the
	// timers and the executor nor stopping them counts.
	warm := 5 * r.period
	time.Sleep(warm)
	cpu0, start := cpuTime(), time.Now()
	time.Sleep(r.d - warm)
	cpu, wall := cpuTime()-cpu0, time.Since(start)
	cancel()
	wg.Wait()
	b.StopTimer()
	var late []time.Duration
	var missed uint64
	for _, l := range logs {
		late = append(late, l.late...)
		missed += l.missed
	}
	reportLatencies(b, late)
	var worst time.Duration
	for _, d := range late {
		worst = max(worst, d)
	}
	b.ReportMetric(float64(worst)/float64(time.Microsecond), "max_us")
	b.ReportMetric(100*float64(missed)/float64(uint64(len(late))+missed), "missed_%")
	b.ReportMetric(100*float64(cpu)/float64(wall), "cpu_%")
}

// timerLog is one timer's record: its lateness at each call, and the
// deadlines it missed. It fills a cache line of its own (the slice's
// backing array is allocated apart).
type timerLog struct {
	late   []time.Duration
	missed uint64
	_      [64 - 32]byte
}

// record appends a call's lateness, unless the log is full, and adds the
// deadlines missed before it.
func (l *timerLog) record(d time.Duration, missed uint64) {
	if len(l.late) < cap(l.late) {
		l.late = append(l.late, d)
	}
	l.missed += missed
}

// BenchmarkTimerLateness measures how late timer callbacks start (actual
// start minus deadline): through the executor with the precise timer
// source and with Go's timers, beside bare time.AfterFunc timers re-armed
// on absolute deadlines, in the same run. Run with -benchtime 1x; each case
// lasts 2 s. The 1,000 timers start one after the other (within about a
// millisecond), or spread evenly over their period. cpu_% is the
// process's CPU time over the wall time, in percent of one core, in the
// steady state (see timerRun.measure).
func BenchmarkTimerLateness(b *testing.B) {
	cases := []struct {
		name           string
		n              int
		period         time.Duration
		loaded, spread bool
	}{
		{"1x1kHz", 1, time.Millisecond, false, false},
		{"1000x100Hz", 1000, 10 * time.Millisecond, false, false},
		{"1000x100Hz-spread", 1000, 10 * time.Millisecond, false, true},
		{"1000x100Hz-busy-workers", 1000, 10 * time.Millisecond, true, false},
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
					timerRun{n: c.n, period: c.period, d: 2 * time.Second, clock: src.clock, loaded: c.loaded, spread: c.spread}.measure(b)
				}
			})
		}
	}
}

// BenchmarkTimerGroup measures the executor's cost of a group of 1,000
// timers that fall due together, as timers started together on a grid
// do: each op advances a simulated clock by the period, which serves the
// group (take out of the heap, trigger), and waits until the last of the
// 1,000 callbacks has run. ns/timer is the op's wall time over 1,000.
// With cold, the benchmark sleeps 10 ms (untimed) before each op, as
// between the periods of 100 Hz timers, so the op starts with the
// workers parked and the timers' memory no longer in their caches.
func BenchmarkTimerGroup(b *testing.B) {
	for _, workers := range []int{1, 2} {
		for _, cold := range []bool{false, true} {
			name := fmt.Sprintf("workers=%d/hot", workers)
			if cold {
				name = fmt.Sprintf("workers=%d/cold", workers)
			}
			b.Run(name, func(b *testing.B) { benchmarkTimerGroup(b, workers, cold) })
		}
	}
}

func benchmarkTimerGroup(b *testing.B, workers int, cold bool) {
	const n, period = 1000, 10 * time.Millisecond
	clock := timers.NewSim(time.Unix(1000, 0))
	ex := executor.New(executor.Options{Workers: workers, Clock: clock})
	o := ex.NewOwner("timers", ex.NewGroup("timers", executor.Reentrant))
	var left atomic.Int64
	done := make(chan struct{}, 1)
	logs := make([]*timerLog, n)
	for i := range logs {
		log := &timerLog{}
		logs[i] = log
		if _, err := o.Timer(period, func(ctx context.Context, ev timers.Event) {
			log.record(ev.Late(), ev.Missed)
			if left.Add(-1) == 0 {
				done <- struct{}{}
			}
		}); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); ex.Run(ctx) }()
	defer func() { cancel(); wg.Wait() }()
	calls := 0
	for b.Loop() {
		if cold {
			b.StopTimer()
			time.Sleep(period)
			b.StartTimer()
		}
		left.Store(n)
		clock.Advance(period)
		<-done
		calls += n
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(calls), "ns/timer")
	for _, l := range logs {
		if l.missed != 0 {
			b.Fatalf("a timer missed %d deadlines", l.missed)
		}
	}
}
