package bench_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bench"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// The go test -bench entry points of the suite's metrics that the
// executor's and internal/mqtt's benchmarks do not cover. They run the
// suite's workloads (see BENCHMARKS.md):
//
//	go test -run XXX -bench . ./internal/bench/

func reportMicros(b *testing.B, name string, d time.Duration) {
	b.ReportMetric(float64(d)/float64(time.Microsecond), name)
}

// BenchmarkTimerLateness runs 1,000 timers at 100 Hz through the executor,
// on the precise timer source (GOMAXPROCS raised to 3 meanwhile, as
// robotexec run does) and on Go's timers, and as the baseline 1,000
// time.AfterFunc timers re-armed on absolute deadlines, for at least b.N
// calls, and reports the lateness of the calls (start minus deadline):
// p50_us and p99_us, and the process's cpu_% meanwhile. ns/op is the
// wall time per call, 10 µs by construction. The executor package's
// BenchmarkTimerLateness measures more cases (one 1 kHz timer, timers
// spread over their period, busy workers).
func BenchmarkTimerLateness(b *testing.B) {
	const n, period = bench.DefaultTimers, bench.DefaultTimerPeriod
	// Enough periods for b.N calls, after the two warm-up periods.
	run := func(b *testing.B) time.Duration {
		return time.Duration(3+(b.N+n-1)/n) * period
	}
	for _, c := range []struct {
		name  string
		clock timers.Clock
	}{{"executor-precise", timers.Precise{}}, {"executor-go", timers.System{}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			l, err := bench.TimerLatenessExecutor(c.clock, 2, n, period, run(b))
			if err != nil {
				b.Fatal(err)
			}
			reportMicros(b, "p50_us", l.P50)
			reportMicros(b, "p99_us", l.P99)
			b.ReportMetric(float64(l.Missed), "missed")
			b.ReportMetric(l.CPU, "cpu_%")
		})
	}
	b.Run("afterfunc", func(b *testing.B) {
		b.ReportAllocs()
		l := bench.TimerLatenessAfterFunc(n, period, run(b))
		reportMicros(b, "p50_us", l.P50)
		reportMicros(b, "p99_us", l.P99)
		b.ReportMetric(l.CPU, "cpu_%")
	})
}

var (
	loadOnce sync.Once
	load     float64
)

// halfLoad returns the latency metric's rate on this machine with 2
// workers (bench.LatencyLoad), measured once per process, as the suite
// does.
func halfLoad(b *testing.B) float64 {
	loadOnce.Do(func() {
		var err error
		if load, _, _, err = bench.LatencyLoad(2, 100*time.Millisecond); err != nil {
			b.Fatal(err)
		}
	})
	return load
}

// BenchmarkDispatchLatencyHalfLoad is the suite's latency metric: b.N
// events paced at half what the slower of the two sustains (2 workers;
// bench.LatencyLoad), through the
// executor and, as the baseline, the channel pool; it reports p50_us,
// p99_us and p99.9_us of trigger → callback start. Unlike the executor's
// BenchmarkDispatchLatency (a fixed 100k events/s, the producer spinning
// without yielding), the producer yields its processor while it waits.
func BenchmarkDispatchLatencyHalfLoad(b *testing.B) {
	report := func(b *testing.B, l bench.Latency) {
		reportMicros(b, "p50_us", l.P50)
		reportMicros(b, "p99_us", l.P99)
		reportMicros(b, "p99.9_us", l.P999)
		b.ReportMetric(l.Rate, "events/s")
	}
	b.Run("executor", func(b *testing.B) {
		rate := halfLoad(b)
		b.ReportAllocs()
		b.ResetTimer()
		l, err := bench.LatencyExecutor(2, rate, time.Duration(float64(b.N)/rate*float64(time.Second)))
		if err != nil {
			b.Fatal(err)
		}
		report(b, l)
	})
	b.Run("chanpool", func(b *testing.B) {
		rate := halfLoad(b)
		b.ReportAllocs()
		b.ResetTimer()
		report(b, bench.LatencyChanPool(2, rate, time.Duration(float64(b.N)/rate*float64(time.Second))))
	})
}

// batch is how many subscriptions or timers one executor of the memory
// benchmarks holds before the next one replaces it, so that memory stays
// bounded whatever b.N.
const batch = 10_000

// BenchmarkIdleSubscriptionBytes registers idle subscriptions (in-process
// bus, default queue) on an executor: ns/op, B/op and allocs/op are those
// of a registration; retained_B/sub is the live heap per subscription after
// GC (bench.SubscriptionBytes), and chan_B/sub the baseline's, a channel of
// the same capacity.
func BenchmarkIdleSubscriptionBytes(b *testing.B) {
	retained, err := bench.SubscriptionBytes(batch)
	if err != nil {
		b.Fatal(err)
	}
	topics := make([]string, batch)
	for i := range topics {
		topics[i] = fmt.Sprintf("idle/%d", i)
	}
	cb := func(ctx context.Context, _ subscribers.Message) {}
	var o *executor.Owner
	var bus *subscribers.Router
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%batch == 0 {
			b.StopTimer()
			ex := executor.New(executor.Options{Workers: 1})
			o, bus = ex.NewOwner("idle", nil), new(subscribers.Router)
			b.StartTimer()
		}
		if _, err := o.Subscribe(bus, topics[i%batch], cb); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(retained, "retained_B/sub")
	b.ReportMetric(bench.ChannelBytes(batch), "chan_B/sub")
}

// BenchmarkTimerBytes makes periodic timers (an hour, so that none fires)
// on an executor: ns/op, B/op and allocs/op are those of making one;
// retained_B/timer is the live heap per timer after GC (bench.TimerBytes),
// and afterfunc_B/timer the baseline's, an armed time.AfterFunc timer.
func BenchmarkTimerBytes(b *testing.B) {
	retained, err := bench.TimerBytes(batch)
	if err != nil {
		b.Fatal(err)
	}
	cb := func(ctx context.Context, _ timers.Event) {}
	var o *executor.Owner
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%batch == 0 {
			b.StopTimer()
			if o != nil {
				stop(o.Executor())
			}
			o = executor.New(executor.Options{Workers: 1}).NewOwner("timers", nil)
			b.StartTimer()
		}
		if _, err := o.Timer(time.Hour, cb); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	stop(o.Executor())
	b.ReportMetric(retained, "retained_B/timer")
	b.ReportMetric(bench.AfterFuncBytes(batch), "afterfunc_B/timer")
}

// stop stops an executor that never ran, which stops its timers.
func stop(ex *executor.Executor) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ex.Run(ctx)
}
