package observers_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/chrometrace"
	"github.com/robotexec/robotexec/internal/observers"
	"github.com/robotexec/robotexec/subscribers"
)

// nop is a run observer that does nothing: the cost of the hook itself
// (two clock reads and a call per run).
type nop struct{}

func (nop) Ran(executor.Run) {}

// config is one way of observing the executor in BenchmarkOverhead.
type config struct {
	name string
	opts func(workers int) executor.Options
}

func withRuns(r *observers.Runs) executor.Options {
	return executor.Options{Runs: r, Stamp: r.Stamp}
}

var configs = []config{
	{"off", func(int) executor.Options { return executor.Options{} }},
	{"nop", func(int) executor.Options { return executor.Options{Runs: nop{}} }},
	{"on", func(w int) executor.Options {
		return withRuns(observers.New(observers.Options{Workers: w, Trace: chrometrace.New(w, 0)}))
	}},
	{"on-monotonic", func(w int) executor.Options {
		return withRuns(observers.New(observers.Options{Workers: w, Trace: chrometrace.New(w, 0), MonotonicClock: true}))
	}},
}

// BenchmarkOverhead measures dispatch throughput with Runs and a trace
// recorder (what robotexec run does with metrics.listen and -trace) against
// the same executor without an observer, in the same run: the workload of
// executor.BenchmarkDispatch (empty callbacks on 4·W subscriptions of a
// reentrant group, depth 256, block policy, one publisher, starting the
// pool and draining it included), in rounds of up to 100,000 callbacks per
// configuration, the configurations back to back within a round in a
// rotating order. It reports each configuration's ns per callback (total
// over the rounds) and the median over the rounds of its throughput
// relative to "off" (x-off: 0.9 means 10% fewer callbacks per second).
// "nop" is a run observer that does nothing, the cost of the hook alone;
// "on-monotonic" is "on" reading Go's monotonic clock instead of the
// time-stamp counter.
func BenchmarkOverhead(b *testing.B) {
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			round := min(b.N, 100_000)
			total := make([]time.Duration, len(configs))
			ratios := make([][]float64, len(configs))
			for r := 0; r*round < b.N; r++ {
				n := min(round, b.N-r*round)
				took := make([]time.Duration, len(configs))
				for k := range configs {
					i := (k + r) % len(configs)
					took[i] = dispatch(b, workers, n, configs[i].opts(workers))
					total[i] += took[i]
				}
				for i := range configs {
					ratios[i] = append(ratios[i], float64(took[0])/float64(took[i]))
				}
			}
			for i, c := range configs {
				b.ReportMetric(float64(total[i].Nanoseconds())/float64(b.N), "ns/cb-"+c.name)
				if i > 0 {
					b.ReportMetric(median(ratios[i]), "x-off-"+c.name)
				}
			}
		})
	}
}

func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// dispatch runs n empty callbacks as executor.BenchmarkDispatch does and
// returns how long that took, from the first publication to the end of
// the drain.
func dispatch(b *testing.B, workers, n int, opts executor.Options) time.Duration {
	opts.Workers = workers
	ex := executor.New(opts)
	o := ex.NewOwner("bench", ex.NewGroup("bench", executor.Reentrant))
	bus := new(subscribers.Router)
	nsubs := 4 * workers
	pubs := make([]*subscribers.Publisher, nsubs)
	for i := range pubs {
		topic := fmt.Sprintf("bench/%d", i)
		if _, err := o.Subscribe(bus, topic, func(ctx context.Context, _ subscribers.Message) {},
			executor.Depth(256), executor.Overflow(subscribers.Block)); err != nil {
			b.Fatal(err)
		}
		pubs[i], _ = bus.Publisher(topic)
	}
	if r, ok := opts.Runs.(*observers.Runs); ok {
		r.Register(ex)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	m := subscribers.Message{Payload: []byte("x")}
	start := time.Now()
	go func() { done <- ex.Run(ctx) }()
	for i := range n {
		pubs[i%nsubs].PublishMessage(ctx, m)
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	if got := ex.Stats().Runs; got != uint64(n) {
		b.Fatalf("ran %d callbacks, want %d", got, n)
	}
	return took
}
