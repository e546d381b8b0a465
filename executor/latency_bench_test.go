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

// BenchmarkDispatchLatency measures trigger → callback start at a paced
// rate: a producer publishes to 4·W subscriptions one message every
// interval (paced on the monotonic clock, yielding its processor while it
// waits, so that woken workers need not wait for it), and each callback
// records now minus the message's Received stamp. Beside it, the baseline:
// the same pacing into the channel pool, closures recording the same.
// robotexec bench measures the same at half the executor's throughput.
func BenchmarkDispatchLatency(b *testing.B) {
	const interval = 10 * time.Microsecond // 100k events/s: far under the capacity, with the producer busy-waiting on one core
	for _, workers := range []int{2, 4} {
		b.Run(fmt.Sprintf("executor/workers=%d", workers), func(b *testing.B) {
			ex := executor.New(executor.Options{Workers: workers})
			o := ex.NewOwner("bench", ex.NewGroup("bench", executor.Reentrant))
			bus := new(subscribers.Router)
			nsubs := 4 * workers
			lat := make([][]time.Duration, nsubs)
			pubs := make([]*subscribers.Publisher, nsubs)
			for i := range nsubs {
				topic := fmt.Sprintf("lat/%d", i)
				// One subscription's callbacks never overlap: lat[i] needs
				// no lock.
				_, err := o.Subscribe(bus, topic, func(m subscribers.Message) {
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
				for time.Now().Before(next) {
					runtime.Gosched()
				}
				next = next.Add(interval)
				pubs[i%nsubs].PublishMessage(subscribers.Message{Received: time.Now()})
			}
			cancel()
			<-done
			b.StopTimer()
			var all []time.Duration
			for _, l := range lat {
				all = append(all, l...)
			}
			reportLatencies(b, all)
		})
		b.Run(fmt.Sprintf("chanpool/workers=%d", workers), func(b *testing.B) {
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
			for range b.N {
				for time.Now().Before(next) {
					runtime.Gosched()
				}
				next = next.Add(interval)
				ch <- job{sent: time.Now()}
			}
			close(ch)
			wg.Wait()
			b.StopTimer()
			var all []time.Duration
			for _, l := range lat {
				all = append(all, l...)
			}
			reportLatencies(b, all)
		})
	}
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
				var next *executor.Publisher
				if i < 4 {
					next, _ = o.Publisher(bus, fmt.Sprintf("p/%d", i+1))
				}
				_, err := o.Subscribe(bus, fmt.Sprintf("p/%d", i), func(m subscribers.Message) {
					if next != nil {
						next.PublishMessage(subscribers.Message{Received: m.Received})
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
				first.PublishMessage(subscribers.Message{Received: sent})
				lat = append(lat, (<-done).Sub(sent))
			}
			b.StopTimer()
			cancel()
			<-stopped
			reportLatencies(b, lat)
		})
	}
}
