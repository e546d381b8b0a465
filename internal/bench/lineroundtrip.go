package bench

import (
	"runtime"
	"sync/atomic"
	"time"
)

// What the machine makes a cache line's trip cost. The in-process
// dispatch rows pass a few cache lines between the producer's CPU and the
// workers' at every message (a subscription's queue and its wait set
// entry), where the chan pool passes about one, its channel's: their ratio
// follows what a line's trip between two CPUs costs, which on a virtual
// machine changes as the host moves its virtual CPUs (46–56 ns or 326–450
// ns a round trip within an hour on the 2-vCPU machine of BENCHMARKS.md).
// The throughput group measures it beside each repetition.

// lineRoundTrips is how many round trips LineRoundTrip times: 2–18 ms at
// the figures above.
const lineRoundTrips = 40_000

// lineChunk is how many round trips are timed together.
const lineChunk = 1000

// paddedCounter is a counter on a cache line of its own.
type paddedCounter struct {
	_ [64]byte
	n atomic.Int64
	_ [56]byte
}

// LineRoundTrip returns how long one cache line takes to go from one
// thread to another and back: two goroutines, each locked to its thread,
// take turns incrementing a counter that the other waits for, spinning,
// lineRoundTrips times each; the figure is the median over chunks of
// lineChunk round trips, so that a preemption does not count. It reports
// false, measuring nothing, with GOMAXPROCS below 2, where the two could
// not run at once.
func LineRoundTrip() (time.Duration, bool) {
	if runtime.GOMAXPROCS(0) < 2 {
		return 0, false
	}
	c := new(paddedCounter)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		turns(&c.n, 1, 2*lineRoundTrips)
		close(done)
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	times := make([]float64, 0, lineRoundTrips/lineChunk)
	for v := int64(0); v < 2*lineRoundTrips; v += 2 * lineChunk {
		start := time.Now()
		turns(&c.n, v, v+2*lineChunk)
		times = append(times, float64(time.Since(start)))
	}
	<-done
	return time.Duration(Median(times) / lineChunk), true
}

// turns waits for n to reach each value of its turns from first, every
// other one, before end, and increments it; it yields to the Go
// scheduler now and then, so that a peer without a CPU of its own gets one.
func turns(n *atomic.Int64, first, end int64) {
	for v := first; v < end; v += 2 {
		for spins := 0; n.Load() != v; spins++ {
			if spins&1023 == 1023 {
				runtime.Gosched()
			}
		}
		n.Store(v + 1)
	}
}
