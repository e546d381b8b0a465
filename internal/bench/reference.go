package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/examples/referencesystem/refsys"
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/gcpace"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// The reference workload: the Autoware reference system
// (refsys.Autoware), run as robotexec run runs examples/referencesystem/
// autoware.yaml, its KPIs taken where VehicleDBWSystem takes them.

const (
	// referenceWarmup is the command nodes' warm-up: the messages at the
	// sink skipped before the windows start.
	referenceWarmup = 9
	// referenceWait bounds the start of a run: the broker, and the
	// warm-up, about a second; on a machine loaded by other processes
	// the saturated graph's command node, behind its starved branch,
	// takes far longer.
	referenceWait = 30 * time.Second
	// referenceSink is the topic of VehicleDBWSystem, the command node
	// that sees the hot path and the planner.
	referenceSink = "VehicleInterface"
	// referenceHotPathCrunches is the number of callbacks in sequence on
	// the hot path whose crunch the hot path's latency holds: a points
	// transformer, PointCloudFusion, RayGroundFilter and
	// EuclideanClusterDetector.
	referenceHotPathCrunches = 4
)

// ReferenceWindow is what one window of a run of the reference system
// measured: the hot path's latency and drops at a subscription to
// ObjectCollisionEstimator's topic, whose messages carry the path's own
// history; the rest at one beside VehicleDBWSystem's (the same topic,
// queue and KPIs).
type ReferenceWindow struct {
	// Length is the window's length.
	Length time.Duration
	// HotPath holds the hot path's latency of each sample, in ms.
	HotPath []float64
	// Drops is the sum of the samples' hot-path drops.
	Drops uint64
	// Planner holds BehaviorPlanner's periods, in ms.
	Planner []float64
	// EndToEnd holds each sample's latency from its oldest stamp, in ms.
	EndToEnd []float64
	// CPU is the process's CPU time, user and system, over the window.
	CPU time.Duration
	// Crunches counts the crunching callbacks that ran: the publications
	// of the nodes that crunch (every node but the sensors and commands).
	Crunches uint64
	// Runs counts the executor's callback runs.
	Runs uint64
	// PlannerLate holds how late BehaviorPlanner's timer callback
	// started after each of its deadlines, in ms.
	PlannerLate []float64

	from, to time.Time // the window's bounds, for plannerRuns.machine
}

// ReferenceRun is a run of the reference system: its windows, and the
// process's resident memory at the end.
type ReferenceRun struct {
	Windows []ReferenceWindow
	// RSS is the resident set in bytes at the end of the run; 0 where it
	// cannot be read.
	RSS uint64
	// PlannerHeldBy names what ran on the workers at the deadlines at
	// which BehaviorPlanner's timer callback started late, with counts
	// (see plannerRuns.heldBy).
	PlannerHeldBy string

	runs *plannerRuns // the recorded runs; nil unless recorded
}

// referenceRounds numbers the runs, for their client IDs.
var referenceRounds atomic.Int64

// RunReference runs g (refsys.Autoware, or a variant of it: the KPIs
// are taken at VehicleDBWSystem's topic) on an executor of workers workers,
// behind an MQTT client of the broker at url (a tcp:// URL; "" starts the
// embedded broker), connected as robotexec run connects: in-process, its
// node types as built from the config, the default timer source and GC
// headroom. After the warm-up it measures windows windows of length
// window each. With record, it records the callbacks' runs
// (executor.Options.Runs) for the planner's figures (PlannerLate,
// PlannerHeldBy); a run without the crunch, which measures what the
// executor costs a run, leaves them out.
func RunReference(g refsys.Graph, url string, workers, windows int, window time.Duration, record bool) (ReferenceRun, error) {
	return runReference(g, url, workers, windows, window, record, 0)
}

// runReference is RunReference building BehaviorPlanner plannerAfter
// after the nodes before it (see referencePlannerAfter).
func runReference(g refsys.Graph, url string, workers, windows int, window time.Duration, record bool, plannerAfter time.Duration) (ReferenceRun, error) {
	if workers < 1 || windows < 1 || window <= 0 {
		return ReferenceRun{}, fmt.Errorf("bench: reference: workers %d, windows %d, window %v", workers, windows, window)
	}
	defer gcpace.Start(int64(config.DefaultGCHeadroom)).Stop()
	clock, _ := defaultClock()
	if _, ok := clock.(timers.Precise); ok && runtime.GOMAXPROCS(0) <= workers {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers + 1))
	}
	id := fmt.Sprintf("robotexec-bench-reference-%d-%d", os.Getpid(), referenceRounds.Add(1))
	cfg := mqtt.Config{InProcess: true, Linger: g.Linger}
	if url == "" {
		brk, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: discard})
		if err != nil {
			return ReferenceRun{}, err
		}
		defer brk.Close()
		url, cfg.Audience = brk.URL(), brk.AudienceOf(id)
	}
	client, err := dialBench(url, id, cfg)
	if err != nil {
		return ReferenceRun{}, err
	}
	defer client.Close()
	if all := workers + g.PriorityWorkers; (g.PriorityWorkers > 0 || g.PinWorkers) && runtime.GOMAXPROCS(0) <= all {
		// As robotexec run: a processor for every worker, and one for
		// the precise timer source's thread.
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(all + 1))
	}
	opts := executor.Options{Workers: workers, PriorityWorkers: g.PriorityWorkers, Realtime: g.Realtime, PinWorkers: g.PinWorkers, ReserveForTimers: g.ReserveForTimers, Logger: discard, Clock: clock}
	var runs *plannerRuns
	if record {
		runs = newPlannerRuns()
		opts.Runs, opts.Stamp = runs, runs.stamp
	}
	ex := executor.New(opts)
	rg, err := buildReference(g, ex, client.Router(), plannerAfter)
	if err != nil {
		_ = stopped(ex)
		return ReferenceRun{}, err
	}
	if runs != nil {
		runs.watch(ex)
		rg.runs = runs
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	ws, err := rg.measure(windows, window)
	cancel()
	if rerr := <-done; err == nil {
		err = rerr
	}
	for _, n := range rg.nodes {
		n.Shutdown()
	}
	if err != nil {
		return ReferenceRun{}, err
	}
	run := ReferenceRun{Windows: ws, RSS: residentBytes()}
	if runs != nil {
		run.PlannerHeldBy, run.runs = runs.heldBy(), runs
	}
	return run, nil
}

// referenceGraph is the reference system built on an executor, with the
// bench's subscription at the sink.
type referenceGraph struct {
	ex       *executor.Executor
	nodes    []*nodes.Node
	crunched []*subscribers.Subscription // one subscription of each topic that crunching nodes publish
	runs     *plannerRuns                // the runs, for the planner's start
	warm     chan struct{}               // closed after the warm-up

	mu      sync.Mutex
	samples []referenceSample // at the command node
	hot     []referenceSample // at the hot path's sink's topic
}

// referenceSample is one message at the sink, after the warm-up.
type referenceSample struct {
	at time.Time
	refsys.Sample
}

// buildReference builds g's nodes on ex and router, and the
// bench's subscriptions beside VehicleDBWSystem's and to the hot path's
// sink's topic. It registers the
// reference system's node types in this process first (once; robotexec's
// binaries do not have them otherwise).
func buildReference(graph refsys.Graph, ex *executor.Executor, router *subscribers.Router, plannerAfter time.Duration) (*referenceGraph, error) {
	refsys.Register()
	cfg, err := config.Parse("autoware.yaml", []byte(graph.Config()), nil)
	if err != nil {
		return nil, err
	}
	g := &referenceGraph{ex: ex, warm: make(chan struct{})}
	env := &nodes.Env{Executor: ex, Router: router, Logger: discard, QoS: config.DefaultQoS, Depth: subscribers.DefaultDepth}
	plain := map[string]bool{} // the topics of sensors: no crunch
	for _, nc := range cfg.Nodes {
		if nc.Name == refsys.Planner {
			time.Sleep(plannerAfter) // its timer's first deadline moves with it
		}
		n, err := nodes.Build(context.Background(), env, nodes.Spec{Name: nc.Name, Type: nc.Type, Group: nc.Group, Priority: nc.Priority, Params: nc.Params})
		if err != nil {
			return nil, err
		}
		g.nodes = append(g.nodes, n)
		if nc.Type == refsys.TypeSensor {
			p := refsys.SensorParams{Topic: nc.Name}
			if err := nc.Params.Decode(&p); err != nil {
				return nil, err
			}
			plain[p.Topic] = true
		}
	}
	// The hot path's own messages give its latency and drops; the command
	// node's, the rest. A command node's history is merged from messages
	// of different cycles, the first entry of each node kept: behind a
	// saturated branch it may pair this cycle's sink with the sensors of
	// a cycle hundreds of milliseconds older (refsys.Message.Merge).
	if err := g.subscribeSamples(ex, router, "bench_kpis", referenceSink, graph.HotPath, &g.samples, func() { close(g.warm) }); err != nil {
		return nil, err
	}
	if err := g.subscribeSamples(ex, router, "bench_hot_path", graph.HotPath.Sink, graph.HotPath, &g.hot, nil); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, cb := range ex.Callbacks() {
		if s := cb.Subscription; s != nil && !plain[s.Filter()] && !seen[s.Filter()] {
			seen[s.Filter()] = true
			g.crunched = append(g.crunched, s)
		}
	}
	return g, nil
}

// subscribeSamples subscribes the bench to topic, whose messages carry
// the KPIs of hot, and appends each message's sample after the warm-up
// to *into; first, if not nil, is called at the first.
func (g *referenceGraph) subscribeSamples(ex *executor.Executor, router *subscribers.Router, name, topic string, hot refsys.HotPath, into *[]referenceSample, first func()) error {
	k := refsys.KPIs{HotPath: hot, Warmup: referenceWarmup}
	_, err := ex.NewOwner(name, nil).Subscribe(router, topic, func(_ context.Context, m subscribers.Message) {
		now := time.Now()
		var msg refsys.Message
		if msg.UnmarshalBinary(m.Payload) != nil {
			return
		}
		s, ok := k.Add(&msg, now)
		if !ok {
			return
		}
		if first != nil {
			first()
			first = nil
		}
		g.mu.Lock()
		*into = append(*into, referenceSample{at: now, Sample: s})
		g.mu.Unlock()
	}, executor.Depth(10), executor.Overflow(subscribers.DropOldest))
	return err
}

// crunches returns the publications of the crunching nodes so far: on
// each of their topics, the messages one subscription accepted (with
// keep-last queues, every publication; the drops come after).
func (g *referenceGraph) crunches() uint64 {
	var n uint64
	for _, s := range g.crunched {
		n += s.Stats().Accepted
	}
	return n
}

// measure waits for the warm-up, then measures the windows one after the
// other.
func (g *referenceGraph) measure(windows int, window time.Duration) ([]ReferenceWindow, error) {
	select {
	case <-g.warm:
	case <-time.After(referenceWait):
		return nil, errors.New("bench: reference: no hot path at the sink after the warm-up")
	}
	type mark struct {
		at       time.Time
		cpu      time.Duration
		crunches uint64
		runs     uint64
	}
	now := func() mark {
		cpu, _ := processCPU()
		return mark{time.Now(), cpu, g.crunches(), g.ex.Stats().Runs}
	}
	marks := []mark{now()}
	for range windows {
		time.Sleep(window) // the window's length: the graph runs on its timers meanwhile
		// A window holds at least one hot-path sample and two planner
		// periods: on a loaded machine a short window may not, and is
		// made longer, up to referenceWait.
		for began := marks[len(marks)-1].at; !g.enough(began) && time.Since(began) < referenceWait; {
			time.Sleep(referenceExtension)
		}
		marks = append(marks, now())
	}
	g.mu.Lock()
	samples, hot := slices.Clone(g.samples), slices.Clone(g.hot)
	g.mu.Unlock()
	ws := make([]ReferenceWindow, windows)
	for i := range ws {
		from, to := marks[i], marks[i+1]
		w := &ws[i]
		w.Length, w.CPU = to.at.Sub(from.at), to.cpu-from.cpu
		w.from, w.to = from.at, to.at
		w.Crunches, w.Runs = to.crunches-from.crunches, to.runs-from.runs
		if g.runs != nil {
			w.PlannerLate = g.runs.late(from.at, to.at)
		}
		for _, s := range samples {
			if s.at.Before(from.at) || !s.at.Before(to.at) {
				continue
			}
			w.EndToEnd = append(w.EndToEnd, ms(s.Latency))
			if s.Planner {
				w.Planner = append(w.Planner, ms(s.PlannerPeriod))
			}
		}
		for _, s := range hot {
			if s.HotPath && !s.at.Before(from.at) && s.at.Before(to.at) {
				w.HotPath = append(w.HotPath, ms(s.HotPathLatency))
				w.Drops += s.HotPathDrops
			}
		}
	}
	return ws, nil
}

// referenceExtension is the step by which a window with too few samples
// is made longer.
const referenceExtension = 50 * time.Millisecond

// enough reports whether the samples since from hold a hot-path sample
// and two planner periods.
func (g *referenceGraph) enough(from time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	var hot, planner int
	for _, s := range g.samples {
		if s.Planner && !s.at.Before(from) {
			planner++
		}
	}
	for _, s := range g.hot {
		if s.HotPath && !s.at.Before(from) {
			hot++
		}
	}
	return hot >= 1 && planner >= 2
}

// ReferenceLowerBound returns the hot path's least latency on this
// machine: the time of referenceHotPathCrunches crunches of
// refsys.DefaultCrunch in sequence, the median of n measurements; and the
// CPU time they took, the median too, 0 where the thread's CPU time
// cannot be read. Under load from other processes the time exceeds the
// CPU time.
func ReferenceLowerBound(n int) (wall, cpu time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	walls, cpus := make([]float64, max(n, 1)), make([]float64, max(n, 1))
	var sink int64
	for i := range walls {
		began := time.Now()
		c0, ok0 := threadCPU()
		for range referenceHotPathCrunches {
			sink += refsys.Crunch(refsys.DefaultCrunch)
		}
		c1, ok1 := threadCPU()
		walls[i] = float64(time.Since(began))
		if ok0 && ok1 {
			cpus[i] = float64(c1 - c0)
		}
	}
	runtime.KeepAlive(sink)
	return time.Duration(Median(walls)), time.Duration(Median(cpus))
}

// residentBytes returns the process's resident set in bytes (procRSS of
// this process), or 0 where it cannot be read.
func residentBytes() uint64 {
	rss, err := procRSS(os.Getpid())
	if err != nil || rss < 0 {
		return 0
	}
	return uint64(rss)
}
