package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Defaults of Config's fields.
const (
	DefaultBudget       = 2 * time.Minute
	DefaultRepeat       = 5
	DefaultIdleEntities = 100_000
	DefaultTimers       = 1000
	DefaultTimerPeriod  = 10 * time.Millisecond
	DefaultMemoryCount  = 10_000
	DefaultAllocEvents  = 200_000
)

// Groups lists the suite's groups of metrics, in the order they run and
// appear in the table; Config.Only selects among them.
var Groups = []string{"throughput", "latency", "cost", "timers", "bridge", "run", "idle", "pipeline", "view", "cluster", "reference", "memory"}

// weights share the budget among the groups.
var weights = map[string]float64{
	"throughput": 0.12, "latency": 0.18, "cost": 0.12, "timers": 0.26, "bridge": 0.26, "run": 0.2, "idle": 0.1, "pipeline": 0.24, "view": 0.2, "cluster": 0.1, "reference": 0.14, "memory": 0.01,
}

// minSlice is the shortest run of one system in one repetition, per group.
var minSlice = map[string]time.Duration{
	"throughput": 20 * time.Millisecond, "latency": 50 * time.Millisecond, "cost": 20 * time.Millisecond,
	"timers": 100 * time.Millisecond, "bridge": 100 * time.Millisecond, "pipeline": 200 * time.Millisecond,
	"view": viewMinSlice, "cluster": 100 * time.Millisecond, "reference": referenceMinWindow * 8 / 3,
}

// measured is the share of the budget spent measuring; the rest goes to
// setting up (100,000 subscriptions, a broker), collecting garbage and the
// memory group, which takes a second or two whatever the budget.
const measured = 0.95

// The metrics, as issue 6 names them.
var (
	specThroughput = Spec{Name: "dispatch throughput (cb/s)", Unit: "cb/s", BaselineName: "chan pool", Target: &Target{Of: "ratio", Op: ">=", Bound: 0.5}}
	specThroughBus = Spec{Name: "dispatch throughput via bus (cb/s)", Unit: "cb/s", BaselineName: "chan pool"}
	specLatP50     = Spec{Name: "dispatch latency p50 (us)", Unit: "us", BaselineName: "chan pool"}
	specLatP99     = Spec{Name: "dispatch latency p99 (us)", Unit: "us", BaselineName: "chan pool", Target: &Target{Of: "ratio", Op: "<=", Bound: 2.0}}
	specLatP999    = Spec{Name: "dispatch latency p99.9 (us)", Unit: "us", BaselineName: "chan pool"}
	specCost       = Spec{Name: "per-event cost 100k vs 10 ents (ns)", Unit: "ns/event", BaselineName: "10 ents", Target: &Target{Of: "ratio", Op: "<=", Bound: 1.2}}
	specTimer      = Spec{Name: "timer lateness p99 (us)", Unit: "us", BaselineName: "time.AfterFunc", Target: &Target{Of: "ratio", Op: "<=", Bound: 1.5}}
	specTimerGo    = Spec{Name: "timer lateness p99, go timers (us)", Unit: "us", BaselineName: "time.AfterFunc"}
	specBridge     = Spec{Name: "mqtt bridge msgs/s", Unit: "msgs/s", BaselineName: "faster raw forwarder", Target: &Target{Of: "ratio", Op: ">=", Bound: 0.8}}
	specBridgeMosq = Spec{Name: "mqtt bridge via mosquitto (msgs/s)", Unit: "msgs/s", BaselineName: "faster raw forwarder", Target: &Target{Of: "ratio", Op: ">=", Bound: 0.9}}
	specBridgeClus = Spec{Name: "mqtt bridge via a 2-node cluster (msgs/s)", Unit: "msgs/s", BaselineName: "faster raw forwarder", Target: &Target{Of: "ratio", Op: ">=", Bound: 0.9}}
	specFailover   = Spec{Name: "mqtt failover to the other node (ms)", Unit: "ms", BaselineName: "a new connection", Target: &Target{Of: "value", Op: "<=", Bound: 1000}}
	specPipeP50    = Spec{Name: "pipeline 5 hops p50 (us)", Unit: "us", BaselineName: "chan chain", Target: &Target{Of: "ratio", Op: "<=", Bound: 1.0}}
	specPipeP99    = Spec{Name: "pipeline 5 hops p99 (us)", Unit: "us", BaselineName: "chan chain"}
	specPipeHop    = Spec{Name: "pipeline 5 hops p50 vs broker hop (us)", Unit: "us", BaselineName: "1 broker hop", Target: &Target{Of: "ratio", Op: "<=", Bound: 0.2}}
	specPipeMosq   = Spec{Name: "pipeline 5 hops via mosquitto (us cpu/msg)", Unit: "us cpu/msg", BaselineName: "all through broker"}
	// Each run allocates its context (8 bytes), which must not be
	// reused (a context kept past its run stays done), and nothing else:
	// at most one allocation an event, fewer where a run serves several
	// messages of a busy subscription.
	specAllocs     = Spec{Name: "allocs per event (in-process)", Unit: "allocs/event", BaselineName: "chan pool", Target: &Target{Of: "value", Op: "<=", Bound: 1}}
	specSubBytes   = Spec{Name: "bytes per idle subscription", Unit: "B", BaselineName: "chan of depth 10"}
	specTimerBytes = Spec{Name: "bytes per timer", Unit: "B", BaselineName: "time.AfterFunc"}
)

// MetricNames lists the names of every metric of the suite, in the order
// of the table.
func MetricNames() []string {
	var names []string
	for _, g := range Groups {
		for _, s := range groupSpecs[g] {
			names = append(names, s.Name)
		}
	}
	return names
}

var groupSpecs = map[string][]Spec{
	"throughput": {specThroughput, specThroughBus},
	"latency":    {specLatP50, specLatP99, specLatP999},
	"cost":       {specCost},
	"timers":     {specTimer, specTimerGo},
	"bridge":     {specBridge, specBridgeMosq},
	"run":        {specRunBridge, specRunBridgePaced, specRunBridgeRSS, specRunTimer, specRunTimerMissed},
	"idle":       {specIdle},
	"pipeline":   {specPipeP50, specPipeP99, specPipeHop, specPipeMosq},
	"view":       {specViewCPU, specViewP99},
	"cluster":    {specBridgeClus, specFailover},
	"reference": {specRefMean, specRefP99, specRefDrops, specRefPlanner, specRefMean1, specRefDrops1, specRefMosq,
		specRefSat, specRefSatDrops, specRefSatPlain, specRefSatPlainDrops, specRefSatRealtime, specRefCPU},
	"memory": {specAllocs, specSubBytes, specTimerBytes},
}

// Config configures a run of the suite. The zero value runs every metric
// with the defaults.
type Config struct {
	// Budget bounds the run's time, about; 0 means DefaultBudget. It is
	// shared among the metrics, and each metric's share among its
	// repetitions.
	Budget time.Duration
	// Repeat is the number of repetitions of each metric; 0 means
	// DefaultRepeat.
	Repeat int
	// Workers is the number of the executor's workers, and of the
	// baselines' goroutines; 0 means runtime.NumCPU().
	Workers int
	// Only, when not empty, runs only these groups (see Groups).
	Only []string
	// Progress, when not nil, receives a line as each group starts.
	Progress io.Writer
	// Executable is the robotexec executable that the groups measuring
	// robotexec processes (run, idle) start, as `robotexec run` and as
	// the suite's child processes (ChildEnv); without it their rows are
	// not measured.
	Executable string

	// IdleEntities is the number of idle subscriptions of the per-event
	// cost's loaded case; 0 means DefaultIdleEntities. Tests make it small.
	IdleEntities int
	// Timers and TimerPeriod are the timer workload's; 0 means
	// DefaultTimers and DefaultTimerPeriod.
	Timers      int
	TimerPeriod time.Duration
	// MemoryCount is the number of subscriptions and of timers whose memory
	// is measured; 0 means DefaultMemoryCount.
	MemoryCount int
	// AllocEvents is the number of events whose allocations are counted;
	// 0 means DefaultAllocEvents.
	AllocEvents int
}

// check applies the defaults and validates c.
func (c Config) check() (Config, error) {
	def := func(p *int, d int) {
		if *p == 0 {
			*p = d
		}
	}
	if c.Budget == 0 {
		c.Budget = DefaultBudget
	}
	if c.TimerPeriod == 0 {
		c.TimerPeriod = DefaultTimerPeriod
	}
	def(&c.Repeat, DefaultRepeat)
	def(&c.Workers, runtime.NumCPU())
	def(&c.IdleEntities, DefaultIdleEntities)
	def(&c.Timers, DefaultTimers)
	def(&c.MemoryCount, DefaultMemoryCount)
	def(&c.AllocEvents, DefaultAllocEvents)
	switch {
	case c.Budget < 0:
		return c, fmt.Errorf("bench: budget %v is negative", c.Budget)
	case c.TimerPeriod < 0:
		return c, fmt.Errorf("bench: timer period %v is negative", c.TimerPeriod)
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"repeat", c.Repeat}, {"workers", c.Workers}, {"idle entities", c.IdleEntities}, {"timers", c.Timers}, {"memory count", c.MemoryCount}, {"alloc events", c.AllocEvents}} {
		if n.v < 0 {
			return c, fmt.Errorf("bench: %s %d is negative", n.name, n.v)
		}
	}
	for _, g := range c.Only {
		if !slices.Contains(Groups, g) {
			return c, fmt.Errorf("bench: no metric group %q (groups: %s)", g, strings.Join(Groups, ", "))
		}
	}
	return c, nil
}

func (c Config) selected(g string) bool { return len(c.Only) == 0 || slices.Contains(c.Only, g) }

// slice returns the length of one system's run in one repetition of group
// g: the group's share of the measured budget, split among 2·Repeat runs.
func (c Config) slice(g string) time.Duration {
	var total float64
	for _, x := range Groups {
		if c.selected(x) {
			total += weights[x]
		}
	}
	share := float64(c.Budget) * measured * weights[g] / total / float64(2*c.Repeat)
	return max(time.Duration(share), minSlice[g])
}

// suite is one run of the suite.
type suite struct {
	ctx context.Context
	cfg Config
}

// Run runs the selected metrics of the suite as cfg says and returns the
// report. A metric that cannot be measured is reported with its error; Run
// returns an error only for an invalid cfg or when ctx ends, then with the
// metrics measured so far.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.check()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	s := &suite{ctx: ctx, cfg: cfg}
	rep := &Report{
		Machine: Machine{CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
			LoadBefore: loadAverage()},
		Workers: cfg.Workers,
		Repeat:  cfg.Repeat,
		Budget:  cfg.Budget.String(),
	}
	runs := map[string]func() ([]Metric, error){
		"throughput": s.throughput, "latency": s.latency, "cost": s.cost,
		"timers": s.timers, "bridge": s.bridge, "run": s.run, "idle": s.idle, "pipeline": s.pipeline, "view": s.view, "cluster": s.cluster, "reference": s.reference, "memory": s.memory,
	}
	for _, g := range Groups {
		if !cfg.selected(g) {
			continue
		}
		if err := ctx.Err(); err != nil {
			break
		}
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "bench: %s: %d repetitions of robotexec and its baseline", g, cfg.Repeat)
			if _, sliced := minSlice[g]; sliced {
				fmt.Fprintf(cfg.Progress, ", %v each", cfg.slice(g).Round(time.Millisecond))
			}
			fmt.Fprintln(cfg.Progress)
		}
		runtime.GC()
		began := time.Now()
		ms, err := runs[g]()
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "bench: %s: done in %v\n", g, time.Since(began).Round(100*time.Millisecond))
		}
		if err != nil {
			ms = ms[:0]
			for _, spec := range groupSpecs[g] {
				ms = append(ms, Failed(spec, err))
			}
		}
		rep.Metrics = append(rep.Metrics, ms...)
	}
	rep.Elapsed = time.Since(start).Round(100 * time.Millisecond).String()
	rep.Machine.LoadAfter = loadAverage()
	return rep, ctx.Err()
}

// pairs runs cfg.Repeat repetitions of a and b, robotexec's workload and
// its baseline's, alternating which goes first. Each returns one figure
// per metric; pairs returns them by metric, then by repetition. It stops at
// the first error, or when the context ends.
func (s *suite) pairs(a, b func() ([]float64, error)) (as, bs [][]float64, err error) {
	add := func(dst [][]float64, xs []float64) [][]float64 {
		for len(dst) < len(xs) {
			dst = append(dst, nil)
		}
		for i, x := range xs {
			dst[i] = append(dst[i], x)
		}
		return dst
	}
	for i := range s.cfg.Repeat {
		if err := s.ctx.Err(); err != nil {
			return nil, nil, err
		}
		var x, y []float64
		if i%2 == 0 {
			if x, err = a(); err == nil {
				y, err = b()
			}
		} else {
			if y, err = b(); err == nil {
				x, err = a()
			}
		}
		if err != nil {
			return nil, nil, err
		}
		as, bs = add(as, x), add(bs, y)
	}
	return as, bs, nil
}

// loadAverage returns the first three fields of /proc/loadavg, or "" where
// there is none.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
