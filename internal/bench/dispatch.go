package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
)

// ChanCapacity is the capacity of the baseline's shared channel.
const ChanCapacity = 1024

// discard is the logger of every executor and client of the suite.
var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// Rate is a count of events and the time they took.
type Rate struct {
	// Events is the number of callbacks run (or messages forwarded).
	Events int
	// Elapsed is the time from the first event's trigger until the last
	// one's callback had run.
	Elapsed time.Duration
}

// PerSecond returns Events per second of Elapsed.
func (r Rate) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Events) / r.Elapsed.Seconds()
}

// dispatchRig is executor/bench_test.go's BenchmarkDispatch workload: an
// executor with 4·workers subscriptions of an in-process router, depth 256,
// Block policy, in one reentrant group, each with an empty callback.
type dispatchRig struct {
	ex     *executor.Executor
	subs   []*subscribers.Subscription
	pubs   []*subscribers.Publisher
	cancel context.CancelFunc
	done   chan error
}

// send hands m to subscription i: through the router (its publisher: topic
// routing, and a time stamp when m has none) or directly, as the channel
// pool's producer hands a closure to the channel.
func (r *dispatchRig) send(i int, m subscribers.Message, viaBus bool) {
	if viaBus {
		r.pubs[i].PublishMessage(context.Background(), m)
		return
	}
	r.subs[i].Deliver(m)
}

func newDispatchRig(workers int, cb func(i int) func(ctx context.Context, _ subscribers.Message), depth int) (*dispatchRig, error) {
	ex := executor.New(executor.Options{Workers: workers, Logger: discard})
	o := ex.NewOwner("bench", ex.NewGroup("bench", executor.Reentrant))
	bus := new(subscribers.Router)
	r := &dispatchRig{ex: ex, subs: make([]*subscribers.Subscription, 4*workers), pubs: make([]*subscribers.Publisher, 4*workers)}
	for i := range r.pubs {
		topic := fmt.Sprintf("bench/%d", i)
		s, err := o.Subscribe(bus, topic, cb(i), executor.Depth(depth), executor.Overflow(subscribers.Block))
		if err != nil {
			return nil, err
		}
		r.subs[i] = s
		r.pubs[i], _ = bus.Publisher(topic)
	}
	return r, nil
}

func emptyCallback(int) func(ctx context.Context, _ subscribers.Message) {
	return func(ctx context.Context, _ subscribers.Message) {}
}

// start runs the executor in the background.
func (r *dispatchRig) start() {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan error, 1)
	go func() { r.done <- r.ex.Run(ctx) }()
}

// stop stops the executor and waits until it has drained.
func (r *dispatchRig) stop() error {
	r.cancel()
	return <-r.done
}

// waitRuns waits until the executor has run n callbacks in all.
func (r *dispatchRig) waitRuns(n uint64) {
	for r.ex.Stats().Runs < n {
		time.Sleep(50 * time.Microsecond)
	}
}

// checkEvery is how many events the producers publish between two looks at
// the clock.
const checkEvery = 256

// DispatchExecutor runs BenchmarkDispatch/executor's workload for about d:
// one producer hands empty messages round robin to the 4·workers
// subscriptions (Subscription.Deliver) as fast as the Block policy lets
// it, then stops the executor, which drains. The Rate's Elapsed runs from
// the first message until the executor has stopped, as in the benchmark.
func DispatchExecutor(workers int, d time.Duration) (Rate, error) {
	return dispatchExecutor(workers, d, false)
}

// DispatchExecutorBus is DispatchExecutor publishing through the in-process
// bus (BenchmarkDispatch/executor+bus), which adds topic routing and the
// messages' time stamps.
func DispatchExecutorBus(workers int, d time.Duration) (Rate, error) {
	return dispatchExecutor(workers, d, true)
}

func dispatchExecutor(workers int, d time.Duration, viaBus bool) (Rate, error) {
	r, err := newDispatchRig(workers, emptyCallback, 256)
	if err != nil {
		return Rate{}, err
	}
	r.start()
	nsubs := len(r.pubs)
	m := subscribers.Message{Payload: []byte("x")}
	n := 0
	start := time.Now()
	for {
		for range checkEvery {
			r.send(n%nsubs, m, viaBus)
			n++
		}
		if time.Since(start) >= d {
			break
		}
	}
	if err := r.stop(); err != nil {
		return Rate{}, err
	}
	elapsed := time.Since(start)
	if got := r.ex.Stats().Runs; got != uint64(n) {
		return Rate{}, fmt.Errorf("executor ran %d callbacks, want %d", got, n)
	}
	return Rate{Events: n, Elapsed: elapsed}, nil
}

// chanPool is the baseline: workers goroutines calling the func() values
// of one shared channel of capacity ChanCapacity.
type chanPool struct {
	ch chan func()
	wg sync.WaitGroup
}

func newChanPool(workers int) *chanPool {
	p := &chanPool{ch: make(chan func(), ChanCapacity)}
	for range workers {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for f := range p.ch {
				f()
			}
		}()
	}
	return p
}

// stop closes the channel and waits until every function has run.
func (p *chanPool) stop() {
	close(p.ch)
	p.wg.Wait()
}

// DispatchChanPool runs the baseline of DispatchExecutor for about d: one
// producer sends the same empty func() to the pool's channel as fast as it
// can, then closes the channel; Elapsed runs until every worker has
// returned.
func DispatchChanPool(workers int, d time.Duration) Rate {
	p := newChanPool(workers)
	f := func() {}
	n := 0
	start := time.Now()
	for {
		for range checkEvery {
			p.ch <- f
		}
		n += checkEvery
		if time.Since(start) >= d {
			break
		}
	}
	p.stop()
	return Rate{Events: n, Elapsed: time.Since(start)}
}

// AllocsExecutor returns the heap allocations per event (the Mallocs of
// runtime.MemStats) of events callbacks through DispatchExecutor's
// workload, in steady state: after a warm-up, from the first publication
// until the executor has run the last callback.
func AllocsExecutor(workers, events int) (float64, error) {
	r, err := newDispatchRig(workers, emptyCallback, 256)
	if err != nil {
		return 0, err
	}
	r.start()
	defer r.stop()
	nsubs := len(r.pubs)
	m := subscribers.Message{Payload: []byte("x")}
	const warm = 4096
	for i := range warm {
		r.subs[i%nsubs].Deliver(m)
	}
	r.waitRuns(warm)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range events {
		r.subs[i%nsubs].Deliver(m)
	}
	r.waitRuns(uint64(warm + events))
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(events), nil
}

// AllocsChanPool returns the heap allocations per event of the baseline,
// measured as AllocsExecutor's.
func AllocsChanPool(workers, events int) float64 {
	p := newChanPool(workers)
	f := func() {}
	for range 4096 {
		p.ch <- f
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range events {
		p.ch <- f
	}
	p.stop()
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(events)
}
