package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/timers"
)

// The run group's timer rows: a node's timers in an app started as
// `robotexec run` starts a config, in this process (internal/app: the
// config's timer source and GC pacing, the MQTT client connected to the
// embedded broker), beside bare Go timers in an app started the same way.

var (
	specRunTimer       = Spec{Name: "timer lateness p99 under run (us)", Unit: "us", BaselineName: "time.AfterFunc under run", Target: &Target{Of: "value", Op: "<=", Bound: 200}}
	specRunTimerMissed = Spec{Name: "timer deadlines missed under run", Unit: "deadlines", BaselineName: "time.AfterFunc under run", Target: &Target{Of: "value", Op: "<=", Bound: 0}}
)

// runTimersMin is the shortest window of one side of a repetition: the
// rows are about a run's rare late ticks, which a short window misses.
const runTimersMin = time.Second

// stallBound is the gap that HostStalls counts beside the rows: the
// lateness row's bound.
const stallBound = 200 * time.Microsecond

// stallsName names the figure of HostStalls beside the rows.
const stallsName = "a spinning thread's stalls over 200 us"

// runTimersNode names the owner and the group of the measured timers, as
// a node's are named after it.
const runTimersNode = "bench_timers"

// RunLateness is the lateness of timers under run, and what the machine
// made the process wait meanwhile.
type RunLateness struct {
	TimerLateness
	// Waited is the time the process's threads spent runnable but waiting
	// for a CPU (the kernel's run queue) while the deadlines were
	// recorded, summed over the threads (Linux: /proc/self/task/*/schedstat);
	// -1 where unknown. A late or skipped tick with a jump in it waited
	// for the machine, not for robotexec.
	Waited time.Duration
}

// runTimers measures timers in a node of robotexec run.
func (s *suite) runTimers() []Metric {
	w, n, p := s.cfg.Workers, s.cfg.Timers, s.cfg.TimerPeriod
	// The group's slice is shared with the bridge's rows.
	d := max(s.cfg.slice("run")/2, runTimersMin)
	var p50, cpu, waited [2][]float64
	var afterFuncLate []float64   // the baseline's calls a period or more late
	var stalls, longest []float64 // the machine's, beside each repetition (HostStalls)
	var calls uint64
	record := func(i int, l RunLateness) []float64 {
		p50[i], cpu[i] = append(p50[i], micros(l.P50)), append(cpu[i], l.CPU)
		waited[i] = append(waited[i], float64(l.Waited)/float64(time.Millisecond)/d.Seconds())
		return []float64{micros(l.P99), float64(l.Missed)}
	}
	as, bs, err := s.pairs(func() ([]float64, error) {
		st := HostStalls(stallProbe, stallBound)
		stalls, longest = append(stalls, st.PerSecond), append(longest, micros(st.Longest))
		l, err := TimerLatenessRun(s.ctx, w, n, p, d)
		calls += l.Calls
		return record(0, l), err
	}, func() ([]float64, error) {
		l, err := TimerLatenessRunAfterFunc(s.ctx, w, n, p, d)
		afterFuncLate = append(afterFuncLate, float64(l.PeriodLate))
		return record(1, l), err
	})
	if err != nil {
		return []Metric{Failed(specRunTimer, err), Failed(specRunTimerMissed, err)}
	}
	m := NewMetric(specRunTimer, as[0], bs[0])
	m.Note = fmt.Sprintf("%d timers every %v in one node's reentrant group, started together, callback start minus deadline, in an app started as robotexec run starts a config of defaults (internal/app, in this process: %s, executor.gc_headroom's GC pacing, the MQTT client connected to the embedded broker; %d workers) vs as many time.AfterFunc timers re-armed on absolute deadlines in an app of the same config without the node; %v windows; p50 %s vs %s us; cpu %s vs %s of one core (the process's, the broker's included); the process's threads waited %s vs %s ms a second for a CPU (runnable, on the kernel's run queue).",
		n, p, timerSourceName(), w, d, FormatNumber(Median(p50[0])), FormatNumber(Median(p50[1])), cpuPercent(cpu[0]), cpuPercent(cpu[1]), waitedPerSecond(waited[0]), waitedPerSecond(waited[1]))
	m.Figures = []Figure{NewFigure(stallsName, "per second", stalls), NewFigure("the longest such stall", "us", longest)}
	m.Note += fmt.Sprintf(" Beside each repetition, %v of one thread per CPU spinning on the clock, alone: the machine held such a thread for more than %v %s times a second, at most %s us (BENCHMARKS.md: a deadline that falls in one is late by it).",
		stallProbe, stallBound, numberList(stalls), numberList(longest))
	missed := worstRepetition(NewMetric(specRunTimerMissed, as[1], bs[1]))
	missed.Figures = []Figure{NewFigure("time.AfterFunc calls a period or more late", "deadlines", afterFuncLate)}
	missed.Note = fmt.Sprintf("deadlines the node's timers skipped (a timer more than a period late skips the deadlines that passed: timers.Event.Missed, robotexec_timer_missed_ticks_total), in the worst repetition, of %s called in all; the baseline serves every deadline, late: it served %s a period or more late in its worst repetition (the machine's share: about what a timer that skips would have skipped there).",
		FormatNumber(float64(calls)), FormatNumber(slices.Max(append([]float64{0}, afterFuncLate...))))
	return []Metric{m, missed}
}

// worstRepetition returns m with its value the largest of its
// repetitions, its target judged on that: a count that must be 0 in every
// repetition.
func worstRepetition(m Metric) Metric {
	if m.Error != "" || m.Repeats == 0 {
		return m
	}
	m.Value = m.Spread.Value.Max
	m.Baseline = m.Spread.Baseline.Max
	if t := m.Target; t != nil && t.Of == "value" {
		ok := t.Holds(m.Value)
		m.OK = &ok
	}
	return m
}

// timerSourceName names the timer source of robotexec run's default
// config here.
func timerSourceName() string {
	if timers.PreciseSupported() {
		return "executor.timer_source precise, GOMAXPROCS raised to workers+1"
	}
	return "executor.timer_source precise, which is Go's timers here"
}

// waitedPerSecond formats the median of run-queue waits in ms a second,
// "unknown" where one could not be read.
func waitedPerSecond(xs []float64) string {
	for _, x := range xs {
		if x < 0 {
			return "unknown"
		}
	}
	return FormatNumber(Median(xs))
}

// runTimersConfig returns the config of the runs: robotexec run's
// defaults, with workers workers and the embedded broker on a free
// loopback port.
func runTimersConfig(workers int) (*config.Config, error) {
	yaml := fmt.Sprintf("executor: { workers: %d }\nmqtt: { listen: \"127.0.0.1:0\", client_id: robotexec-bench-timers }\n", workers)
	cfg, err := config.Parse("bench-timers.yaml", []byte(yaml), nil)
	if cfg == nil {
		return nil, err
	}
	if err := app.Check(cfg, err); err != nil {
		return nil, err
	}
	return cfg, nil
}

// underRun starts an app on runTimersConfig(workers) as robotexec run
// does, with extra's callbacks (app.Options.Extra; nil for none), calls f
// while it runs, and shuts it down. The GOMAXPROCS that the app raises for
// the precise timer source is restored at the end.
func underRun(workers int, extra func(*nodes.Env) error, f func() error) error {
	cfg, err := runTimersConfig(workers)
	if err != nil {
		return err
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	a, err := app.Start(context.Background(), cfg, discard, app.Options{Extra: extra})
	if err != nil {
		return err
	}
	ferr := f()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Shutdown(ctx); err != nil && ferr == nil {
		ferr = err
	}
	return ferr
}

// lateWindow is the span of deadlines recorded: after the start's
// warm-up, for the run's length.
type lateWindow struct{ from, to time.Time }

// holds reports whether deadline t is recorded.
func (w *lateWindow) holds(t time.Time) bool { return w != nil && t.After(w.from) && !t.After(w.to) }

// TimerLatenessRun runs n periodic timers with the given period in a node
// of an app started as robotexec run starts a config of defaults
// (internal/app: its timer source, its GC pacing, its MQTT client
// connected to the embedded broker), with workers workers, and returns the
// lateness of their deadlines over d, from timerWarmup periods after the
// start, or ctx's error if it ends first. The timers share a reentrant
// group of the node, so that they may run in parallel as the baseline's
// do.
func TimerLatenessRun(ctx context.Context, workers, n int, period, d time.Duration) (RunLateness, error) {
	h := NewHistogram(16)
	var missed atomic.Uint64
	var win atomic.Pointer[lateWindow]
	extra := func(env *nodes.Env) error {
		ex := env.Executor
		o := ex.NewOwner(runTimersNode, ex.NewGroup(runTimersNode, executor.Reentrant))
		for i := range n {
			if _, err := o.Timer(period, func(_ context.Context, ev timers.Event) {
				if win.Load().holds(ev.Expected) {
					h.Record(i, ev.Late())
					if ev.Missed != 0 {
						missed.Add(ev.Missed)
					}
				}
			}); err != nil {
				return err
			}
		}
		return nil
	}
	var cpu float64
	var waited time.Duration
	err := underRun(workers, extra, func() error {
		w := &lateWindow{from: time.Now().Add(timerWarmup * period)}
		w.to = w.from.Add(d)
		win.Store(w)
		var err error
		cpu, waited, err = measureUntil(ctx, w.from, w.to.Add(period))
		return err
	})
	if err != nil {
		return RunLateness{}, err
	}
	return RunLateness{TimerLateness: timerLatenessOf(h, missed.Load(), cpu, period), Waited: waited}, nil
}

// TimerLatenessRunAfterFunc is the baseline of TimerLatenessRun: n bare
// time.AfterFunc timers (TimerLatenessAfterFunc) for d, in an app started
// the same way without the node.
func TimerLatenessRunAfterFunc(ctx context.Context, workers, n int, period, d time.Duration) (RunLateness, error) {
	var l RunLateness
	err := underRun(workers, nil, func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		w0, ok := runQueueWait()
		l.TimerLateness = TimerLatenessAfterFunc(n, period, timerWarmup*period+d)
		w1, ok1 := runQueueWait()
		// The warm-up's wait too: the baseline's window is not
		// told apart.
		l.Waited = waitedBetween(w0, w1, ok && ok1)
		return nil
	})
	return l, err
}

// measureUntil waits until end, or until ctx ends (then with its error),
// and returns the process's CPU (measureCPU) and its threads' run-queue
// wait (runQueueWait; -1 where unknown) from warm until then.
func measureUntil(ctx context.Context, warm, end time.Time) (float64, time.Duration, error) {
	stop := make(chan struct{})
	cpu := measureCPU(warm, stop)
	t := time.NewTimer(time.Until(warm))
	defer t.Stop()
	var err error
	select {
	case <-t.C:
	case <-ctx.Done():
		close(stop)
		return <-cpu, -1, ctx.Err()
	}
	w0, ok := runQueueWait()
	t.Reset(time.Until(end))
	select {
	case <-t.C:
	case <-ctx.Done():
		err = ctx.Err()
	}
	w1, ok1 := runQueueWait()
	close(stop)
	return <-cpu, waitedBetween(w0, w1, ok && ok1), err
}

// waitedBetween returns the run-queue wait between readings w0 and w1
// (runQueueWait), or -1 where they say nothing: one was not read, or a
// thread ended between them.
func waitedBetween(w0, w1 time.Duration, ok bool) time.Duration {
	if !ok || w1 < w0 {
		return -1
	}
	return w1 - w0
}

// runQueueWait returns the time the process's threads have spent
// runnable, waiting for a CPU, summed over the threads (Linux: the
// second field of /proc/self/task/TID/schedstat), and whether it could be
// read. Threads that ended are not counted: compare two readings of a
// process whose threads live on, as the Go runtime's do.
func runQueueWait() (time.Duration, bool) {
	files, err := filepath.Glob("/proc/self/task/*/schedstat")
	if err != nil || len(files) == 0 {
		return 0, false
	}
	var sum time.Duration
	for _, f := range files {
		b, err := os.ReadFile(f)
		fields := bytes.Fields(b)
		if err != nil || len(fields) < 2 {
			continue // a thread that ended meanwhile
		}
		ns, err := strconv.ParseInt(string(fields[1]), 10, 64)
		if err != nil {
			return 0, false
		}
		sum += time.Duration(ns)
	}
	return sum, true
}
