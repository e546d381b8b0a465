package bench

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/timers"
)

// TimerLateness is the distribution of the lateness of timer callbacks:
// the time a callback started minus the deadline it serves.
type TimerLateness struct {
	// P50 and P99 are percentiles of the lateness.
	P50, P99 time.Duration
	// Calls is the number of callbacks recorded.
	Calls uint64
	// Missed counts the deadlines that were skipped (the executor's rule:
	// a timer more than a period late skips the deadlines that passed).
	// The baseline skips none: it serves every deadline, late.
	Missed uint64
	// CPU is the process's CPU time over the wall time while the
	// deadlines were recorded, in percent of one core; -1 where the
	// process's CPU time cannot be read.
	CPU float64
	// PeriodLate counts the calls that came a period or more after their
	// deadline: for the baseline, which serves every deadline, about the
	// deadlines a timer that skips (the executor's) would have skipped.
	PeriodLate uint64
}

func timerLatenessOf(h *Histogram, missed uint64, cpu float64, period time.Duration) TimerLateness {
	p := h.Percentiles(0.50, 0.99)
	return TimerLateness{P50: p[0], P99: p[1], Calls: h.Count(), Missed: missed, CPU: cpu, PeriodLate: h.CountFrom(period)}
}

// measureCPU measures the process's CPU from warm until end, on a
// goroutine of its own, and sends the percentage on the channel it
// returns (-1 where unknown, or if end comes first).
func measureCPU(warm time.Time, end <-chan struct{}) <-chan float64 {
	out := make(chan float64, 1)
	go func() {
		t := time.NewTimer(time.Until(warm))
		defer t.Stop()
		select {
		case <-t.C:
		case <-end:
			out <- -1
			return
		}
		cpu0, ok0 := processCPU()
		start := time.Now()
		<-end
		cpu, ok := processCPU()
		wall := time.Since(start)
		if !ok0 || !ok || wall <= 0 {
			out <- -1
			return
		}
		out <- 100 * float64(cpu-cpu0) / float64(wall)
	}()
	return out
}

// timerWarmup is the number of periods at the start of a run whose
// deadlines are not recorded: the timers' first deadlines fall while the
// workers start.
const timerWarmup = 2

// TimerLatenessExecutor runs n periodic timers with the given period
// through an executor of workers workers on clock (nil means
// timers.System, Go's timers) for d, and returns their lateness
// (timers.Event.Late: the callback's start minus its deadline). The timers
// are created one after the other, as a program starting its nodes does,
// so their deadlines nearly coincide; they share one reentrant group, so
// that they may run in parallel as the baseline's do. On a timers.Precise
// clock that is precise here, GOMAXPROCS is raised to workers+1 for the
// run, as robotexec run does, so that the timer poller finds a processor.
func TimerLatenessExecutor(clock timers.Clock, workers, n int, period, d time.Duration) (TimerLateness, error) {
	if _, ok := clock.(timers.Precise); ok && timers.PreciseSupported() && runtime.GOMAXPROCS(0) <= workers {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers + 1))
	}
	h := NewHistogram(16)
	var missed atomic.Uint64
	ex := executor.New(executor.Options{Workers: workers, Clock: clock, Logger: discard})
	o := ex.NewOwner("timers", ex.NewGroup("timers", executor.Reentrant))
	warm := time.Now().Add(timerWarmup * period)
	for i := range n {
		_, err := o.Timer(period, func(ctx context.Context, ev timers.Event) {
			if ev.Expected.After(warm) {
				h.Record(i, ev.Late())
				if ev.Missed != 0 {
					// Only then: an add to the one counter would move
					// its cache line between the workers at every call.
					missed.Add(ev.Missed)
				}
			}
		})
		if err != nil {
			return TimerLateness{}, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cpu := measureCPU(warm, ctx.Done())
	if err := ex.Run(ctx); err != nil {
		return TimerLateness{}, err
	}
	return timerLatenessOf(h, missed.Load(), <-cpu, period), nil
}

// afTimer is one of the baseline's timers.
type afTimer struct {
	t    atomic.Pointer[time.Timer]
	next atomic.Int64 // the deadline, as the monotonic time since the run's base
}

// TimerLatenessAfterFunc is the baseline of TimerLatenessExecutor: n bare
// time.AfterFunc timers, created the same way, each re-armed by its
// function on absolute deadlines (the next deadline is the previous one
// plus the period, so they do not drift), for d. Lateness is the function's
// start minus its deadline.
func TimerLatenessAfterFunc(n int, period, d time.Duration) TimerLateness {
	h := NewHistogram(16)
	base := time.Now()
	warm := timerWarmup * period
	var stopped atomic.Bool
	var active atomic.Int64
	ts := make([]afTimer, n)
	for i := range ts {
		a := &ts[i]
		f := func() {
			active.Add(1)
			defer active.Add(-1)
			if stopped.Load() {
				return
			}
			now := time.Since(base)
			due := time.Duration(a.next.Load())
			if due > warm {
				h.Record(i, now-due)
			}
			next := due + period
			a.next.Store(int64(next))
			if t := a.t.Load(); t != nil {
				t.Reset(next - time.Since(base))
			}
		}
		first := time.Since(base) + period
		a.next.Store(int64(first))
		a.t.Store(time.AfterFunc(first-time.Since(base), f))
	}
	end := make(chan struct{})
	cpu := measureCPU(base.Add(warm), end)
	time.Sleep(time.Until(base.Add(d)))
	close(end)
	stopped.Store(true)
	for i := range ts {
		ts[i].t.Load().Stop()
	}
	for active.Load() > 0 {
		time.Sleep(time.Millisecond)
	}
	return timerLatenessOf(h, 0, <-cpu, period)
}
