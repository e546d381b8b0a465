package executor_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// traceSeeds is how many random workloads TestTraceRandomWorkloads runs;
// ROBOTEXEC_TRACE_SEEDS raises it for a longer local soak.
func traceSeeds(t *testing.T) int {
	if s := os.Getenv("ROBOTEXEC_TRACE_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		return n
	}
	if testing.Short() {
		return 10
	}
	return 60
}

// workload is one random configuration of the executor: timers,
// subscriptions with random queues, groups, callbacks that busy-wait, publish
// down a pipeline or panic, and producers.
type workload struct {
	rng         *rand.Rand
	workers     int
	prioWorkers int  // Options.PriorityWorkers
	reserve     bool // Options.ReserveForTimers
	ex          *executor.Executor
	bus         *subscribers.Router
	rec         *tracecheck.Recorder
	group       map[uint64]string
	subs        []*subscribers.Subscription
	pubs        []*subscribers.Publisher
	out         [][]*subscribers.Publisher // out[i][j]: sub i's owner's publisher on topic j
	entities    int
	timers      int
	priority    map[uint64]int // subscriptions' priorities above 0
	panicked    atomic.Int64
	published   atomic.Int64
}

func newWorkload(t *testing.T, seed uint64) *workload {
	w := &workload{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	w.workers = 1 + w.rng.IntN(4)
	if w.rng.IntN(4) == 0 {
		// A quarter of the workloads run priority workers beside.
		w.prioWorkers = 1 + w.rng.IntN(2)
	}
	// A third of the workloads hold callbacks for timers; decided
	// apart from the generator, which draws the same workloads as
	// before.
	w.reserve = seed%3 == 1
	w.rec = &tracecheck.Recorder{}
	w.ex = executor.New(executor.Options{
		Workers:          w.workers,
		PriorityWorkers:  w.prioWorkers,
		ReserveForTimers: w.reserve,
		Logger:           slog.New(slog.NewTextHandler(io.Discard, nil)),
		Observer:         w.rec,
	})
	w.bus = new(subscribers.Router)
	w.group = map[uint64]string{}

	// Owners with their default mutually exclusive groups, a shared
	// mutually exclusive group and a reentrant one.
	var owners []*executor.Owner
	for i := range 1 + w.rng.IntN(3) {
		owners = append(owners, w.ex.NewOwner(fmt.Sprintf("node%d", i), nil))
	}
	// Half the workloads give priorities: to a third of the
	// subscriptions, and to the shared group.
	prioritized := w.rng.IntN(2) == 0
	sharedPriority := 0
	if prioritized {
		sharedPriority = w.rng.IntN(3)
	}
	w.priority = map[uint64]int{}
	shared := w.ex.NewGroup("shared", executor.MutuallyExclusive, executor.Priority(sharedPriority))
	reentrant := w.ex.NewGroup("reentrant", executor.Reentrant)
	// Resources (docs/design.md, Resources): some callbacks need a random
	// subset, named in a random order.
	var resources []*executor.Resource
	for i := range w.rng.IntN(4) {
		resources = append(resources, w.ex.Resource(fmt.Sprintf("res%d", i)))
	}
	pick := func() (*executor.Owner, []executor.Option, string) {
		o := owners[w.rng.IntN(len(owners))]
		var opts []executor.Option
		if len(resources) > 0 && w.rng.IntN(3) == 0 {
			var needs []string
			for range 1 + w.rng.IntN(len(resources)) {
				needs = append(needs, resources[w.rng.IntN(len(resources))].Name())
			}
			opts = append(opts, executor.Needs(needs...))
		}
		switch w.rng.IntN(4) {
		case 0:
			return o, append(opts, executor.InGroup(shared)), "shared"
		case 1:
			return o, append(opts, executor.InGroup(reentrant)), ""
		default:
			return o, opts, o.Name()
		}
	}

	nsubs := 1 + w.rng.IntN(8)
	for i := range nsubs {
		topic := fmt.Sprintf("t/%d", i)
		p, err := w.bus.Publisher(topic)
		require.NoError(t, err)
		w.pubs = append(w.pubs, p)
	}
	w.out = make([][]*subscribers.Publisher, nsubs)
	for i := range nsubs {
		o, opts, g := pick()
		// Owners with in-process publishers serve one message per run;
		// the others batch (Options.Batch): a third of the subscriptions
		// do not publish.
		publishes := w.rng.IntN(3) != 0
		// Callbacks publish through the executor's publishers, which never
		// block: Block subscriptions mute them instead (docs/design.md,
		// Resources).
		policy := subscribers.Policy(w.rng.IntN(3))
		opts = append(opts, executor.Depth(1+w.rng.IntN(16)), executor.Overflow(policy))
		prio := 0
		if prioritized && w.rng.IntN(3) == 0 {
			prio = 1 + w.rng.IntN(3)
			opts = append(opts, executor.Priority(prio))
		}
		if g == "shared" {
			prio = max(prio, sharedPriority)
		}
		i := i
		s, err := o.Subscribe(w.bus, fmt.Sprintf("t/%d", i), func(ctx context.Context, m subscribers.Message) { w.work(ctx, i) }, opts...)
		require.NoError(t, err)
		w.subs = append(w.subs, s)
		if prio > 0 {
			w.priority[s.ID()] = prio
		}
		if g != "" {
			w.group[s.ID()] = g
		}
		if !publishes {
			continue
		}
		w.out[i] = make([]*subscribers.Publisher, nsubs)
		for j := range nsubs {
			p, err := w.bus.Publisher(fmt.Sprintf("t/%d", j))
			require.NoError(t, err)
			w.out[i][j] = p
		}
	}
	for k := range w.rng.IntN(4) {
		o, opts, g := pick()
		period := time.Duration(1+w.rng.IntN(5)) * time.Millisecond
		// Timers publish through their owner's publishers too.
		idx := len(w.out)
		w.out = append(w.out, make([]*subscribers.Publisher, nsubs))
		for j := range nsubs {
			p, err := w.bus.Publisher(fmt.Sprintf("t/%d", j))
			require.NoError(t, err)
			w.out[idx][j] = p
		}
		_ = k
		tm, err := o.Timer(period, func(ctx context.Context, _ timers.Event) { w.work(ctx, -1-idx) }, opts...)
		require.NoError(t, err)
		w.timers++
		if g != "" {
			w.group[tm.ID()] = g
		}
	}
	w.entities = len(w.subs) + w.timers
	return w
}

// work is every callback: a little CPU, sometimes a publication further
// down the pipeline, rarely a panic.
func (w *workload) work(ctx context.Context, from int) {
	// The callbacks share one generator; it is not safe for concurrent use.
	w.mu().Lock()
	// Subscription i publishes to a higher-numbered one (no cycle); timer
	// k, called with from = -1-k, to any subscription but 0.
	pubIndex, low := from, from+1
	if from < 0 {
		pubIndex, low = -1-from, 1
	}
	busy := w.rng.IntN(20)
	next := -1
	if w.rng.IntN(3) == 0 && low < len(w.pubs) {
		next = low + w.rng.IntN(len(w.pubs)-low)
	}
	boom := w.rng.IntN(100) == 0
	w.mu().Unlock()
	deadline := time.Now().Add(time.Duration(busy) * time.Microsecond)
	for time.Now().Before(deadline) {
	}
	if next > 0 && w.out[pubIndex] != nil {
		w.out[pubIndex][next].Publish(ctx, []byte("p"))
	}
	if boom {
		w.panicked.Add(1)
		panic("injected")
	}
}

var rngMu sync.Mutex

func (w *workload) mu() *sync.Mutex { return &rngMu }

func TestTraceRandomWorkloads(t *testing.T) {
	// The workloads must exercise every mechanism, or the checks say
	// little: count the steps that show each.
	seen := map[trace.Op]int{}
	passedOver := 0   // workloads where an urgent subscription passed over one queued longer
	prioDequeues := 0 // dequeues by priority workers (Options.PriorityWorkers)
	holds := 0        // callbacks held for timers (Options.ReserveForTimers)
	defer func() {
		if t.Failed() {
			return
		}
		// About 4 in 10 workloads pass over: of 60, none would (0.6^60).
		if passedOver == 0 && traceSeeds(t) >= 60 {
			t.Errorf("no urgent subscription passed over one queued longer in any workload")
		}
		if prioDequeues == 0 && traceSeeds(t) >= 60 {
			t.Errorf("no priority worker dequeued a subscription in any workload")
		}
		for _, op := range []trace.Op{trace.Acquire, trace.Mute, trace.Unmute, trace.Drop, trace.Next} {
			if seen[op] == 0 {
				t.Errorf("no %v step in any workload", op)
			}
		}
		if holds == 0 && traceSeeds(t) >= 60 {
			t.Errorf("no worker held a callback for a timer in any workload")
		}
		t.Logf("steps seen: %v; dequeues by priority workers: %d; holds for timers: %d", seen, prioDequeues, holds)
	}()
	for seed := range uint64(traceSeeds(t)) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			w := newWorkload(t, seed)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w.ex.Run(ctx) }()

			var producers sync.WaitGroup
			rngMu.Lock()
			nprod := 1 + w.rng.IntN(3)
			counts := make([]int, nprod)
			for i := range counts {
				counts[i] = 20 + w.rng.IntN(200)
			}
			cancelEarly := w.rng.IntN(4) == 0
			rngMu.Unlock()
			for i := range nprod {
				producers.Add(1)
				go func() {
					defer producers.Done()
					r := rand.New(rand.NewPCG(seed, uint64(i)))
					for k := range counts[i] {
						w.pubs[r.IntN(len(w.pubs))].Publish(context.Background(), []byte("m"))
						w.published.Add(1)
						if k%50 == 49 {
							time.Sleep(time.Millisecond)
						}
					}
				}()
			}
			started := time.Now()
			if cancelEarly {
				// Stop while producers are still publishing: what is
				// accepted must still run, the rest is counted.
				cancel()
			}
			producers.Wait()
			// Let the timers fire a few times beside the traffic.
			time.Sleep(15*time.Millisecond - time.Since(started))
			cancel()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(30 * time.Second):
				t.Fatal("Run did not return after cancel")
			}

			holds += executor.Holds(w.ex)
			steps := w.rec.Steps()
			for _, st := range steps {
				seen[st.Op]++
				if st.Op == trace.Dequeue && st.Worker >= w.workers {
					prioDequeues++
				}
			}
			model := tracecheck.Model{
				Workers:  w.workers,
				Group:    w.group,
				Drained:  true,
				Entities: w.entities,
				Timers:   w.timers,
				Batch:    executor.DefaultBatch,
				Priority: w.priority,
				Streak:   executor.MaxStreak,

				PriorityWorkers: w.prioWorkers,
			}
			err := tracecheck.Check(steps, model)
			if err != nil {
				logTail(t, steps, 80)
			}
			require.NoError(t, err, "trace of %d steps", len(steps))
			model.Streak = 0 // now fails only for a streak above 0
			if len(w.priority) > 0 && tracecheck.Check(steps, model) != nil {
				passedOver++
			}
			for _, s := range w.subs {
				require.Zero(t, s.Len(), "subscription %s not drained", s.Filter())
			}
			require.Equal(t, uint64(w.panicked.Load()), w.ex.Stats().Panics)
			require.Zero(t, executor.TimersWaiting(w.ex), "every timer taken has started")
		})
	}
}

// logTail logs the last n steps of a failing trace.
func logTail(t *testing.T, steps []tracecheck.Step, n int) {
	t.Helper()
	from := max(0, len(steps)-n)
	for _, s := range steps[from:] {
		t.Logf("%5d %-8v %-12v id=%d batch=%d worker=%d seq=%d %s", s.Index, s.Op, s.Kind, s.ID, s.Batch, s.Worker, s.Seq, s.Reason)
	}
}
