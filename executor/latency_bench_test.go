package executor_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
)

// reportLatencies reports the p50, p99 and p99.9 of ds in microseconds.
func reportLatencies(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	at := func(q float64) float64 {
		return float64(ds[min(len(ds)-1, int(q*float64(len(ds))))]) / float64(time.Microsecond)
	}
	b.ReportMetric(at(0.50), "p50_us")
	b.ReportMetric(at(0.99), "p99_us")
	b.ReportMetric(at(0.999), "p99.9_us")
}

// BenchmarkDispatchLatency measures trigger → callback start at 100k
// events/s: a producer publishes to 4·W subscriptions, and each callback
// records now minus the message's Received stamp. Beside it, the baseline:
// the same pacing into the channel pool, closures recording the same.
// robotexec bench measures the same at half the executor's throughput.
//
// Two producers: executor/ and chanpool/ publish one message every 10 µs,
// waiting on the monotonic clock and yielding their processor meanwhile
// (runtime.Gosched), so that woken workers need not wait for them;
// +bursts publish 10 messages back to back every 100 µs and sleep
// between, as a producer that blocks on its input does (BENCHMARKS.md,
// "What this machine allows").
func BenchmarkDispatchLatency(b *testing.B) {
	for _, workers := range []int{2, 4} {
		for _, p := range []struct {
			name string
			pace func(next time.Time, i int) time.Time
		}{{"", paceYielding}, {"+bursts", paceBursts}} {
			b.Run(fmt.Sprintf("executor%s/workers=%d", p.name, workers), func(b *testing.B) {
				benchLatencyExecutor(b, workers, p.pace)
			})
			b.Run(fmt.Sprintf("chanpool%s/workers=%d", p.name, workers), func(b *testing.B) {
				benchLatencyChanPool(b, workers, p.pace)
			})
		}
	}
}

// latencyInterval is the mean interval between two messages of
// BenchmarkDispatchLatency: 100k events/s, far under the capacity.
const latencyInterval = 10 * time.Microsecond

// paceYielding waits, yielding, until next, the time of message i, and
// returns the next message's.
func paceYielding(next time.Time, _ int) time.Time {
	for time.Now().Before(next) {
		runtime.Gosched()
	}
	return next.Add(latencyInterval)
}

// paceBursts lets message i go at once unless it starts a burst of 10,
// which sleeps until next first; it returns the next burst's time.
func paceBursts(next time.Time, i int) time.Time {
	const burst = 10
	if i%burst != 0 {
		return next
	}
	if d := time.Until(next); d > 0 {
		time.Sleep(d)
	}
	return next.Add(burst * latencyInterval)
}

func benchLatencyExecutor(b *testing.B, workers int, pace func(time.Time, int) time.Time) {
	ex := executor.New(executor.Options{Workers: workers})
	o := ex.NewOwner("bench", ex.NewGroup("bench", executor.Reentrant))
	bus := new(subscribers.Router)
	nsubs := 4 * workers
	lat := make([][]time.Duration, nsubs)
	pubs := make([]*subscribers.Publisher, nsubs)
	for i := range nsubs {
		topic := fmt.Sprintf("lat/%d", i)
		_, err := o.Subscribe(bus, topic, func(ctx context.Context, m subscribers.Message) {
			lat[i] = append(lat[i], time.Since(m.Received))
		}, executor.Depth(1024), executor.Overflow(subscribers.Block))
		if err != nil {
			b.Fatal(err)
		}
		pubs[i], _ = bus.Publisher(topic)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	b.ResetTimer()
	next := time.Now()
	for i := range b.N {
		next = pace(next, i)
		pubs[i%nsubs].PublishMessage(ctx, subscribers.Message{Received: time.Now()})
	}
	cancel()
	<-done
	b.StopTimer()
	reportLatencies(b, slices.Concat(lat...))
}

func benchLatencyChanPool(b *testing.B, workers int, pace func(time.Time, int) time.Time) {
	type job struct{ sent time.Time }
	ch := make(chan job, 1024)
	lat := make([][]time.Duration, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				lat[w] = append(lat[w], time.Since(j.sent))
			}
		}()
	}
	b.ResetTimer()
	next := time.Now()
	for i := range b.N {
		next = pace(next, i)
		ch <- job{sent: time.Now()}
	}
	close(ch)
	wg.Wait()
	b.StopTimer()
	reportLatencies(b, slices.Concat(lat...))
}

// BenchmarkPipeline5 sends messages one at a time through five in-process
// stages (each a node publishing to the next with an executor Publisher)
// and measures the end-to-end latency, with and without hand-off.
func BenchmarkPipeline5(b *testing.B) {
	for _, handoff := range []bool{true, false} {
		b.Run(fmt.Sprintf("handoff=%v", handoff), func(b *testing.B) {
			ex := executor.New(executor.WithHandoff(executor.Options{Workers: 2}, handoff))
			bus := new(subscribers.Router)
			done := make(chan time.Time, 1)
			for i := range 5 {
				o := ex.NewOwner(fmt.Sprintf("stage%d", i), nil)
				var next *subscribers.Publisher
				if i < 4 {
					next, _ = bus.Publisher(fmt.Sprintf("p/%d", i+1))
				}
				_, err := o.Subscribe(bus, fmt.Sprintf("p/%d", i), func(ctx context.Context, m subscribers.Message) {
					if next != nil {
						next.PublishMessage(ctx, subscribers.Message{Received: m.Received})
					} else {
						done <- time.Now()
					}
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			first, _ := bus.Publisher("p/0")
			ctx, cancel := context.WithCancel(context.Background())
			stopped := make(chan error, 1)
			go func() { stopped <- ex.Run(ctx) }()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				sent := time.Now()
				first.PublishMessage(ctx, subscribers.Message{Received: sent})
				lat = append(lat, (<-done).Sub(sent))
			}
			b.StopTimer()
			cancel()
			<-stopped
			reportLatencies(b, lat)
		})
	}
}
