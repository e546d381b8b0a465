package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/robotexec/robotexec/examples/referencesystem/refsys"
)

// The reference group: the Autoware reference system against its lower
// bound, the crunch time of the hot path's four callbacks in sequence,
// measured in the same run, on the Autoware graph and on the saturated
// one (referencesaturated.go). Issue 42 sets the targets.
var (
	specRefMean    = Spec{Name: "reference hot path mean (ms)", Unit: "ms", BaselineName: "lower bound", Target: &Target{Of: "ratio", Op: "<=", Bound: 1.15}}
	specRefP99     = Spec{Name: "reference hot path p99 (ms)", Unit: "ms", BaselineName: "lower bound", Target: &Target{Of: "ratio", Op: "<=", Bound: 2.0}}
	specRefDrops   = Spec{Name: "reference hot path drops", Unit: "msgs", Target: &Target{Of: "value", Op: "==", Bound: 0}}
	specRefPlanner = Spec{Name: "reference planner period std (ms)", Unit: "ms", Target: &Target{Of: "value", Op: "<=", Bound: 0.1}}
	specRefMean1   = Spec{Name: "reference hot path mean, 1 worker (ms)", Unit: "ms", BaselineName: "lower bound"}
	specRefDrops1  = Spec{Name: "reference hot path drops, 1 worker", Unit: "msgs", Target: &Target{Of: "value", Op: "==", Bound: 0}}
	specRefMosq    = Spec{Name: "reference hot path via mosquitto (ms)", Unit: "ms", BaselineName: "lower bound", Target: &Target{Of: "ratio", Op: "<=", Bound: 1.3}}
	specRefCPU     = Spec{Name: "reference cpu (% of a core)", Unit: "%", BaselineName: "crunch cpu"}
)

// referenceMinWindow is the shortest window of a mode's run: a few
// samples of the hot path, which comes every 100 ms.
const referenceMinWindow = 400 * time.Millisecond

// referenceLowerBoundOf is the number of measurements whose median is one
// repetition's lower bound.
const referenceLowerBoundOf = 5

// referenceFigures are a mode's figures, one per window (repetition).
type referenceFigures struct {
	lower                        []float64 // the lower bound measured before the run, ms
	mean, p99, min, max, drops   []float64 // of the hot path, ms and samples
	plannerMean, plannerStd, e2e []float64 // ms
	cpu, crunchCPU, rss          []float64 // % of a core, % of a core, MiB
	plannerLateMin, plannerLate  []float64 // the planner's start after its deadline, min and median, ms
	plannerLateMax               []float64 // and max, ms
	plannerLateP90               []float64 // and p90, ms
	plannerHeldBy                string    // what ran at the deadlines it started late (ReferenceRun.PlannerHeldBy)
	slowed, plannerSteadyStd     []float64 // % of the crunches the machine slowed; the planner's std without the cycles they held, ms
	outliers, heldSlow           int       // the planner's late starts (machineWindow.outliers), and those a slowed crunch held
	phase                        float64   // the planner's deadline after the hot path's roots' runs, ms: the median
	samples                      int       // hot-path samples in all
	windowLength                 time.Duration
	crunchCPU1                   float64 // one crunch's CPU time, ms: the median over 4, or its time where unknown
}

func (s *suite) reference() ([]Metric, error) {
	// The group's time, 2·Repeat slices, goes to the nine modes' windows
	// (2 workers with and without priorities and unpinned, 1 worker, via
	// mosquitto with and without linger, saturated with priority workers,
	// without priorities and in the real-time class), the run without
	// the crunch, whose windows are a third as long, and the two with the
	// planner moved, half as long: Repeat·window·(10 + 1/3). The saturated
	// graph's windows are at least referenceSaturatedMinWindow.
	window := max(s.cfg.slice("reference")*6/31, referenceMinWindow)
	phaseWindow := max(window/2, referenceMinWindow)
	satWindow := max(window, referenceSaturatedMinWindow)
	if s.cfg.Progress != nil {
		fmt.Fprintf(s.cfg.Progress, "bench: reference: 2 workers, 2 workers without priorities, 2 workers unpinned, 1 worker, 2 workers via mosquitto with and without linger: each a run of %d windows of %v after a warm-up of about a second; then without the crunch, windows of %v; then 2 workers with the planner moved, without and with the reserve for timers, windows of %v; then the saturated graph with priorities and priority workers, without, and in the real-time class, windows of %v\n",
			s.cfg.Repeat, window.Round(time.Millisecond), max(window/3, referenceMinWindow).Round(time.Millisecond), phaseWindow.Round(time.Millisecond), satWindow.Round(time.Millisecond))
	}
	two, err := s.referenceMode("2 workers", referencePrioritized, "", 2, window)
	if err != nil {
		return nil, err
	}
	plain, err := s.referenceMode("2 workers without priorities", refsys.Autoware, "", 2, window)
	if err != nil {
		return nil, err
	}
	unpinned, err := s.referenceMode("2 workers unpinned", referenceUnpinned, "", 2, window)
	if err != nil {
		return nil, err
	}
	one, err := s.referenceMode("1 worker", referencePrioritized, "", 1, window)
	if err != nil {
		return nil, err
	}
	bare, err := s.referenceBare(max(window/3, referenceMinWindow))
	if err != nil {
		return nil, err
	}
	movedWithout, moved, err := s.referencePhase(phaseWindow)
	if err != nil {
		return nil, err
	}
	mean, p99 := two.headline(specRefMean, two.mean), NewMetric(specRefP99, two.p99, two.lower)
	p99.Figures = []Figure{NewFigure("crunches the machine slowed", "% of crunches", two.slowed)}
	p99.Note = fmt.Sprintf("the p99 of each window's hot-path latencies (the 2-worker run of the first row) against the lower bound. A crunch that took %v times a lone one's time or more (its CPU shared meanwhile; see the planner row) lengthens the sample whose path it is on by up to a crunch: per window, %% of the crunches: %s.",
		slowBy, numberList(two.slowed))
	mean.Figures = append(mean.Figures,
		NewFigure("hot path mean without priorities", "ms", plain.mean),
		NewFigure("hot path p99 without priorities", "ms", plain.p99),
		NewFigure("planner period std without priorities", "ms", plain.plannerStd),
		NewFigure("hot path mean unpinned", "ms", unpinned.mean),
		NewFigure("hot path p99 unpinned", "ms", unpinned.p99))
	drops := NewMetric(specRefDrops, two.drops, nil)
	mean1, drops1 := one.headline(specRefMean1, one.mean), NewMetric(specRefDrops1, one.drops, nil)
	mosq := s.referenceMosquitto(window)
	saturated := s.referenceSaturated(satWindow)
	mean.Note = fmt.Sprintf("the Autoware reference system (examples/referencesystem/autoware.yaml: 24 nodes, every crunch Crunch(4096)) with priority 1 on its hot path, as saturated.yaml sets it, and executor.reserve_for_timers (the figures without priorities: autoware.yaml as it is), on an executor of 2 workers pinned each to a CPU (executor.pin_workers, as autoware.yaml sets it; the figures unpinned: with priorities, without pin_workers) behind an MQTT client of the embedded broker, as robotexec run runs it; the hot path's latency (FrontLidarDriver/RearLidarDriver to the start of ObjectCollisionEstimator's callback) of each message at a subscription to ObjectCollisionEstimator's topic, whose history is the path's own (at the command node a history merged from messages of different cycles can pair a cycle's sink with older sensors), the other figures at one beside VehicleDBWSystem's (both depth 10, drop_oldest), after a warm-up of %d messages; one run per mode, %d windows of %v each (the repetitions: each window's mean, p99, ...), %d hot-path samples in all; the lower bound is the time of 4 crunches in sequence on the bench's goroutine, the median of %d, measured before each mode's run (%s ms: one crunch %s ms, %s ms of CPU); figures: %s. The modes ignore -workers.",
		referenceWarmup, len(two.mean), two.windowLength.Round(time.Millisecond), two.samples, referenceLowerBoundOf,
		FormatNumber(Median(two.lower)), FormatNumber(Median(two.lower)/referenceHotPathCrunches), FormatNumber(two.crunchCPU1), figureList(mean))
	drops.Note = "the sum of the hot-path nodes' missed samples (keep-last 1 queues overwritten before their run) over each window's messages at the sink."
	planner := plannerMetric(two, bare, movedWithout, moved)
	mean1.Note = "the same graph, the hot path at priority 1, on 1 worker; figures: " + figureList(mean1) + "."
	return slices.Concat([]Metric{mean, p99, drops, planner, mean1, drops1, mosq}, saturated, []Metric{cpuMetric(two, bare)}), nil
}

// plannerMetric is the planner row of the 2-worker run two, with the
// floor of the run without the crunch and the runs with the planner
// moved.
func plannerMetric(two referenceFigures, bare referenceBareFigures, movedWithout, moved referenceFigures) Metric {
	planner := NewMetric(specRefPlanner, two.plannerStd, nil)
	planner.Figures = []Figure{
		NewFigure("planner period mean", "ms", two.plannerMean),
		NewFigure("planner period std without the crunch", "ms", bare.plannerStd),
	}
	planner.Figures = append(planner.Figures,
		NewFigure("planner start after its deadline, min", "ms", two.plannerLateMin),
		NewFigure("planner start after its deadline, median", "ms", two.plannerLate),
		NewFigure("planner start after its deadline, max", "ms", two.plannerLateMax),
		NewFigure("crunches the machine slowed", "% of crunches", two.slowed),
		NewFigure("planner period std without the cycles slowed crunches held", "ms", two.plannerSteadyStd))
	planner.Note = fmt.Sprintf("BehaviorPlanner's 100 ms timer: the standard deviation of its period (stamp to stamp) at the sink, per window; mean %s ms. The floor on this machine: %s ms in the run without the crunch (the same timers on workers that are free when they fall due: what the timer's wake-up gives). Its period varies as its start does; when every worker runs a callback at its deadline (where that falls in the cycle, its start sets), it starts as the first of them ends. Per window, the std, then how late the planner started, min, median and max, in ms: %s; at the deadlines it started %v or more late, the workers ran: %s. %s",
		FormatNumber(planner.Figures[0].Value), FormatNumber(planner.Figures[1].Value),
		windowList(two.plannerStd, two.plannerLateMin, two.plannerLate, two.plannerLateMax), plannerLateBy, orNone(two.plannerHeldBy), two.machineNote())
	addPhase(&planner, movedWithout, moved)
	return planner
}

// cpuMetric is the CPU row of the 2-worker run two, with what the run
// without the crunch took.
func cpuMetric(two referenceFigures, bare referenceBareFigures) Metric {
	cpu := NewMetric(specRefCPU, two.cpu, two.crunchCPU)
	cpu.Figures = []Figure{
		NewFigure("cpu without the crunch", "% of a core", bare.cpu),
		NewFigure("cpu per callback run without the crunch", "us", bare.perRun),
	}
	cpu.Note = fmt.Sprintf("the process's CPU time over each window of the 2-worker run (the nodes, the MQTT client and the embedded broker) vs the CPU time of the crunches that ran in it (the crunching nodes' publications, each the CPU time of one crunch on the bench's thread, measured with the lower bound: a crunch beside another on the machine takes more). What robotexec adds: the same graph with every crunch limit 0 (Crunch returns at once; the same timers, messages and callbacks), %d windows of %v: %s%% of a core, %s us per callback run (timers and subscriptions; a run decodes and encodes 4 KiB messages).",
		len(bare.cpu), bare.window.Round(time.Millisecond), FormatNumber(cpu.Figures[0].Value), FormatNumber(cpu.Figures[1].Value))
	return cpu
}

// referencePrioritized is the graph of the reference rows but the saturated
// ones: the Autoware graph with priority 1 on its hot path, which a
// robotexec user gives the path that matters (robotexec serves it first
// among the ready subscriptions, after the due timers), its workers pinned
// as autoware.yaml pins them, and a worker kept for a timer about to fall
// due (executor.reserve_for_timers).
var referencePrioritized = refsys.Autoware.WithHotPathPriority(1).WithTimerReserve()

// referenceUnpinned is referencePrioritized without pin_workers: the OS
// places the workers' threads.
var referenceUnpinned = func() refsys.Graph {
	g := referencePrioritized
	g.PinWorkers = false
	return g
}()

// referenceBareFigures are the CPU figures of the graph without its
// crunch, one per window.
type referenceBareFigures struct {
	cpu, perRun []float64 // % of a core, µs per callback run
	plannerStd  []float64 // ms
	window      time.Duration
}

// referenceBare runs the graph on 2 workers with every crunch limit 0,
// for s.cfg.Repeat windows of window: what the executor, the router and
// the messages cost without the work.
func (s *suite) referenceBare(window time.Duration) (referenceBareFigures, error) {
	f := referenceBareFigures{window: window}
	run, err := RunReference(refsys.Autoware.WithCrunch(0), "", 2, s.cfg.Repeat, window, false)
	if err != nil {
		return f, err
	}
	for _, w := range run.Windows {
		f.cpu = append(f.cpu, 100*float64(w.CPU)/float64(w.Length))
		f.perRun = append(f.perRun, micros(w.CPU)/float64(max(w.Runs, 1)))
		if len(w.Planner) >= 2 {
			f.plannerStd = append(f.plannerStd, std(w.Planner))
		}
	}
	return f, nil
}

// referenceMosquitto measures the 2-worker mode through mosquitto, with
// mqtt.linger referenceLinger and without, or says why it could not.
func (s *suite) referenceMosquitto(window time.Duration) Metric {
	var f, plain referenceFigures
	err := withMosquitto(func(url string) error {
		var err error
		f, err = s.referenceMode("2 workers via mosquitto", referencePrioritized.WithLinger(referenceLinger), url, 2, window)
		if err != nil {
			return err
		}
		plain, err = s.referenceMode("2 workers via mosquitto without linger", referencePrioritized, url, 2, window)
		return err
	})
	if err != nil {
		return failedOrNotMeasured(specRefMosq, err)
	}
	m := f.headline(specRefMosq, f.mean)
	m.Figures = append(m.Figures,
		NewFigure("hot path mean without linger", "ms", plain.mean),
		NewFigure("ratio without linger", "x", pairRatios(plain.mean, plain.lower)))
	m.Note = fmt.Sprintf("the same graph on 2 workers behind an MQTT client of mosquitto (in-process, robotexec run's default: every publication also goes to the broker, 4 KiB each), with mqtt.linger %v (the broker's copies wait up to that long to share a write); the figures without linger: a run of their own after it, against its own lower bound; figures: %s; %s.",
		referenceLinger, figureList(m), mosquittoVersion())
	return m
}

// referenceLinger is the mqtt.linger of the via-mosquitto row: the
// broker's copies wait up to 10 ms, about the hot path's length, so that
// a lidar cycle's copies share a few writes; the graph's shortest period
// is 25 ms.
const referenceLinger = 10 * time.Millisecond

// referenceMode measures the lower bound s.cfg.Repeat times, then runs g
// on workers workers behind the broker at url ("": the embedded one) for
// s.cfg.Repeat windows of window. The mode's name is for its errors.
func (s *suite) referenceMode(name string, g refsys.Graph, url string, workers int, window time.Duration) (referenceFigures, error) {
	return s.referenceModeAfter(name, g, url, workers, window, 0)
}

// referenceModeAfter is referenceMode building BehaviorPlanner
// plannerAfter after the nodes before it; where that is above 0, it
// records the planner's phase.
func (s *suite) referenceModeAfter(name string, g refsys.Graph, url string, workers int, window, plannerAfter time.Duration) (referenceFigures, error) {
	var f referenceFigures
	var cpus []float64
	for range s.cfg.Repeat {
		if err := s.ctx.Err(); err != nil {
			return f, err
		}
		wall, cpu := ReferenceLowerBound(referenceLowerBoundOf)
		f.lower, cpus = append(f.lower, ms(wall)), append(cpus, ms(cpu))
	}
	f.crunchCPU1 = Median(cpus) / referenceHotPathCrunches
	if f.crunchCPU1 == 0 {
		f.crunchCPU1 = Median(f.lower) / referenceHotPathCrunches
	}
	run, err := runReference(g, url, workers, s.cfg.Repeat, window, true, plannerAfter)
	if err != nil {
		return f, err
	}
	f.windowLength = window
	if plannerAfter > 0 {
		f.phase = run.runs.phase(g.HotPath.Roots)
	}
	lone := time.Duration(Median(f.lower) / referenceHotPathCrunches * float64(time.Millisecond))
	for i, w := range run.Windows {
		if len(w.HotPath) == 0 || len(w.Planner) < 2 {
			return f, fmt.Errorf("bench: reference (%s): window %d of %v had %d hot-path samples and %d planner periods, too few: give it more -budget",
				name, i+1, window, len(w.HotPath), len(w.Planner))
		}
		hot := slices.Sorted(slices.Values(w.HotPath))
		f.samples += len(hot)
		f.mean = append(f.mean, mean(hot))
		f.p99 = append(f.p99, Percentile(hot, 0.99))
		f.min = append(f.min, hot[0])
		f.max = append(f.max, hot[len(hot)-1])
		f.drops = append(f.drops, float64(w.Drops))
		f.plannerMean = append(f.plannerMean, mean(w.Planner))
		f.plannerStd = append(f.plannerStd, std(w.Planner))
		f.e2e = append(f.e2e, mean(w.EndToEnd))
		length := float64(w.Length) / float64(time.Millisecond)
		crunch := float64(w.Crunches) * f.crunchCPU1
		f.cpu = append(f.cpu, 100*ms(w.CPU)/length)
		f.crunchCPU = append(f.crunchCPU, 100*crunch/length)
		if len(w.PlannerLate) > 0 {
			f.plannerLateMin = append(f.plannerLateMin, slices.Min(w.PlannerLate))
			f.plannerLate = append(f.plannerLate, Median(w.PlannerLate))
			f.plannerLateMax = append(f.plannerLateMax, slices.Max(w.PlannerLate))
			f.plannerLateP90 = append(f.plannerLateP90, Percentile(slices.Sorted(slices.Values(w.PlannerLate)), 0.9))
		}
		if run.runs != nil {
			f.addMachine(run.runs.machine(w.from, w.to, lone))
		}
	}
	f.rss = []float64{float64(run.RSS) / (1 << 20)}
	f.plannerHeldBy = run.PlannerHeldBy
	return f, nil
}

// addMachine adds a window's machineWindow to f.
func (f *referenceFigures) addMachine(m machineWindow) {
	if m.crunches > 0 {
		f.slowed = append(f.slowed, 100*float64(m.slowed)/float64(m.crunches))
	}
	if !math.IsNaN(m.steadyStd) {
		f.plannerSteadyStd = append(f.plannerSteadyStd, m.steadyStd)
	}
	f.outliers += m.outliers
	f.heldSlow += m.heldSlow
}

// machineNote says, for the planner's note, how often the machine slowed
// the crunches and how much of the planner's spread that explains.
func (f referenceFigures) machineNote() string {
	if len(f.slowed) == 0 {
		return ""
	}
	return fmt.Sprintf("A crunch that took %v times a lone one's time or more (%s ms) shared its CPU meanwhile, with another thread or, on a VM, with the host; per window, %% of the crunches: %s. The planner's starts %v or more later than their window's median: %d, of which %d came while such a crunch ran; without the cycles those held, the std per window, start to start, in ms: %s.",
		slowBy, FormatNumber(Median(f.lower)/referenceHotPathCrunches*slowBy), numberList(f.slowed), plannerLateBy, f.outliers, f.heldSlow, orNone(numberList(f.plannerSteadyStd)))
}

// headline returns the metric of spec for values against the lower
// bound, with the mode's further figures.
func (f referenceFigures) headline(spec Spec, values []float64) Metric {
	m := NewMetric(spec, values, f.lower)
	m.Figures = []Figure{
		NewFigure("hot path min", "ms", f.min),
		NewFigure("hot path p99", "ms", f.p99),
		NewFigure("hot path max", "ms", f.max),
		NewFigure("hot path drops", "msgs", f.drops),
		NewFigure("planner period mean", "ms", f.plannerMean),
		NewFigure("planner period std", "ms", f.plannerStd),
		NewFigure("end-to-end latency mean", "ms", f.e2e),
		NewFigure("cpu", "% of a core", f.cpu),
		NewFigure("rss", "MiB", f.rss),
	}
	return m
}

// figureList formats a metric's figures for its note: "hot path min
// 9.5 ms, ...".
func figureList(m Metric) string {
	var out string
	for i, f := range m.Figures {
		if i > 0 {
			out += ", "
		}
		out += f.Name + " " + FormatNumber(f.Value) + " " + f.Unit
	}
	return out
}

// windowList formats a figure of each window with others in brackets:
// "0.94 (0.15, 1.16, 3.21), ...".
func windowList(first []float64, more ...[]float64) string {
	var out string
	for i, x := range first {
		if i > 0 {
			out += ", "
		}
		var in []string
		for _, m := range more {
			if i < len(m) {
				in = append(in, FormatNumber(m[i]))
			}
		}
		out += FormatNumber(x) + " (" + strings.Join(in, ", ") + ")"
	}
	return out
}

// numberList formats xs: "0.94, 1.16, 3.21".
func numberList(xs []float64) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = FormatNumber(x)
	}
	return strings.Join(out, ", ")
}

// orNone returns s, or "nothing" if s is empty.
func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// mean returns the mean of xs, at least one.
func mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// std returns the sample standard deviation of xs, at least two.
func std(xs []float64) float64 {
	m := mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}
