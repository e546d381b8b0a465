package bench

import (
	"runtime"
	"sync"
	"time"
)

// What the machine takes from a thread that never waits. A timer that
// falls due while the machine holds the thread that would serve it is
// late by as long, whatever the executor does; on the 2-vCPU machine of
// BENCHMARKS.md, a thread spinning alone, with nothing else running,
// lost its CPU for more than 200 µs several times a second, up to 2.6
// ms. The run group's timer rows measure it beside each repetition.

// stallProbe is how long HostStalls spins.
const stallProbe = 400 * time.Millisecond

// Stalls is what HostStalls found.
type Stalls struct {
	// PerSecond is the gaps longer than the bound per second of one
	// thread's spinning, over all the threads.
	PerSecond float64
	// Longest is the longest gap of any thread, past the bound or not.
	Longest time.Duration
}

// HostStalls spins one goroutine locked to its thread per processor
// (the fewer of GOMAXPROCS and the CPUs) for d, each reading the
// monotonic clock in a loop, and returns the gaps between two readings
// longer than bound: the times the machine ran something else on the
// thread's CPU, or stopped the CPU. A loop's turn takes well under a
// microsecond, so a gap of bound is the machine's, not the loop's.
func HostStalls(d, bound time.Duration) Stalls {
	n := max(min(runtime.GOMAXPROCS(0), runtime.NumCPU()), 1)
	start := time.Now()
	since := func() time.Duration { return time.Since(start) }
	counts := make([]int, n)
	longest := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			counts[i], longest[i] = spinGaps(since, d, bound)
		}()
	}
	wg.Wait()
	var s Stalls
	for i := range n {
		s.PerSecond += float64(counts[i])
		s.Longest = max(s.Longest, longest[i])
	}
	s.PerSecond /= float64(n) * d.Seconds()
	return s
}

// spinGaps reads now until it reaches end and returns how many times
// two readings were more than bound apart, and the longest gap.
func spinGaps(now func() time.Duration, end, bound time.Duration) (int, time.Duration) {
	count, longest := 0, time.Duration(0)
	for last := now(); last < end; {
		t := now()
		gap := t - last
		if gap > bound {
			count++
		}
		longest = max(longest, gap)
		last = t
	}
	return count, longest
}
