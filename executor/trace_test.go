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
// subscriptions with random queues, groups, callbacks that spin, publish
// down a pipeline or panic, and producers.
type workload struct {
	rng       *rand.Rand
	workers   int
	ex        *executor.Executor
	bus       *subscribers.Bus
	rec       *tracecheck.Recorder
	group     map[uint64]string
	subs      []*subscribers.Subscription
	pubs      []*subscribers.Publisher
	entities  int
	timers    int
	panicked  atomic.Int64
	published atomic.Int64
}

func newWorkload(t *testing.T, seed uint64) *workload {
	w := &workload{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	w.workers = 1 + w.rng.IntN(4)
	w.rec = &tracecheck.Recorder{}
	w.ex = executor.New(executor.Options{
		Workers:  w.workers,
		Observer: w.rec,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	w.bus = subscribers.NewBus()
	w.group = map[uint64]string{}

	// Owners with their default mutually exclusive groups, a shared
	// mutually exclusive group and a reentrant one.
	var owners []*executor.Owner
	for i := range 1 + w.rng.IntN(3) {
		owners = append(owners, w.ex.NewOwner(fmt.Sprintf("node%d", i), nil))
	}
	shared := w.ex.NewGroup("shared", executor.MutuallyExclusive)
	reentrant := w.ex.NewGroup("reentrant", executor.Reentrant)
	pick := func() (*executor.Owner, []executor.Option, string) {
		o := owners[w.rng.IntN(len(owners))]
		switch w.rng.IntN(4) {
		case 0:
			return o, []executor.Option{executor.InGroup(shared)}, "shared"
		case 1:
			return o, []executor.Option{executor.InGroup(reentrant)}, ""
		default:
			return o, nil, o.Name()
		}
	}

	nsubs := 1 + w.rng.IntN(8)
	for i := range nsubs {
		topic := fmt.Sprintf("t/%d", i)
		p, err := w.bus.Publisher(topic)
		require.NoError(t, err)
		w.pubs = append(w.pubs, p)
	}
	for i := range nsubs {
		o, opts, g := pick()
		// Subscriptions fed by callbacks never block: a worker blocked on
		// a full queue could wait for itself.
		policy := subscribers.Policy(w.rng.IntN(2))
		if i == 0 && w.rng.IntN(2) == 0 {
			policy = subscribers.Block // fed only by producers, never by callbacks
		}
		opts = append(opts, executor.Depth(1+w.rng.IntN(16)), executor.Overflow(policy))
		i := i
		s, err := o.Subscribe(w.bus, fmt.Sprintf("t/%d", i), func(m subscribers.Message) { w.work(i) }, opts...)
		require.NoError(t, err)
		w.subs = append(w.subs, s)
		if g != "" {
			w.group[s.ID()] = g
		}
	}
	for range w.rng.IntN(4) {
		o, opts, g := pick()
		period := time.Duration(1+w.rng.IntN(5)) * time.Millisecond
		tm, err := o.NewTimer(period, func(timers.Event) { w.work(-1) }, opts...)
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
// down the pipeline (to a higher-numbered, non-blocking subscription, so no
// cycle), rarely a panic.
func (w *workload) work(from int) {
	// The callbacks share one generator; it is not safe for concurrent use.
	w.mu().Lock()
	spin := w.rng.IntN(20)
	next := -1
	if w.rng.IntN(3) == 0 && from+1 < len(w.pubs) {
		next = from + 1 + w.rng.IntN(len(w.pubs)-from-1)
		if next == 0 {
			next = -1
		}
	}
	boom := w.rng.IntN(100) == 0
	w.mu().Unlock()
	deadline := time.Now().Add(time.Duration(spin) * time.Microsecond)
	for time.Now().Before(deadline) {
	}
	if next > 0 {
		w.pubs[next].Publish([]byte("p"))
	}
	if boom {
		w.panicked.Add(1)
		panic("injected")
	}
}

var rngMu sync.Mutex

func (w *workload) mu() *sync.Mutex { return &rngMu }

func TestTraceRandomWorkloads(t *testing.T) {
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
						w.pubs[r.IntN(len(w.pubs))].Publish([]byte("m"))
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

			steps := w.rec.Steps()
			err := tracecheck.Check(steps, tracecheck.Model{
				Workers:  w.workers,
				Group:    w.group,
				Drained:  true,
				Entities: w.entities,
				Timers:   w.timers,
			})
			if err != nil {
				logTail(t, steps, 80)
			}
			require.NoError(t, err, "trace of %d steps", len(steps))
			for _, s := range w.subs {
				require.Zero(t, s.Len(), "subscription %s not drained", s.Filter())
			}
			require.Equal(t, uint64(w.panicked.Load()), w.ex.Stats().Panics)
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
