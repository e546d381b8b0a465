package bench_test

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotexec/robotexec/examples/referencesystem/refsys"
)

// crunchSink keeps the crunches' results alive.
var crunchSink atomic.Int64

// BenchmarkCrunchPair measures whether this machine's CPUs 0 and 1 run
// two crunches at once as fast as one alone, which the reference
// system's parallel crunches assume (BENCHMARKS.md, "What this machine
// allows"): each op crunches Crunch(4096) alone on CPU 0, then twice at
// once, pinned to CPUs 0 and 1. lone_ms is the median lone crunch;
// pair/lone the median of the slower of each pair over the lone crunch
// before it; slowed_% the share of pairs whose slower crunch took 1.5
// times the lone one or more. Run it a minute or more: on a VM the
// slowdowns come in bursts (-benchtime 15000x).
func BenchmarkCrunchPair(b *testing.B) {
	if runtime.NumCPU() < 2 {
		b.Skip("needs two CPUs")
	}
	if err := pinnable(); err != nil {
		b.Skipf("cannot pin threads to CPUs 0 and 1: %v", err)
	}
	lone := make([]float64, 0, b.N)
	ratio := make([]float64, 0, b.N)
	slowed := 0
	for range b.N {
		a := crunchOn(0)
		var pair [2]time.Duration
		var wg sync.WaitGroup
		for c := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pair[c] = crunchOn(c)
			}()
		}
		wg.Wait()
		r := float64(max(pair[0], pair[1])) / float64(a)
		if r >= 1.5 {
			slowed++
		}
		lone, ratio = append(lone, float64(a)/1e6), append(ratio, r)
	}
	slices.Sort(lone)
	slices.Sort(ratio)
	b.ReportMetric(lone[len(lone)/2], "lone_ms")
	b.ReportMetric(ratio[len(ratio)/2], "pair/lone")
	b.ReportMetric(100*float64(slowed)/float64(b.N), "slowed_%")
}

// pinnable reports whether threads can be pinned to CPUs 0 and 1.
func pinnable() error {
	for c := range 2 {
		unpin, err := pinTo(c)
		if err != nil {
			return err
		}
		unpin()
	}
	return nil
}

// crunchOn crunches Crunch(4096) on a thread pinned to cpu and returns
// its time.
func crunchOn(cpu int) time.Duration {
	unpin, _ := pinTo(cpu)
	defer unpin()
	start := time.Now()
	crunchSink.Add(refsys.Crunch(4096))
	return time.Since(start)
}
