package tsc

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/internal/threadsched"
)

// A VM on kvm-clock may have counters that tick at a constant rate in
// every CPU state and agree across its CPUs, which the kernel was told not
// to keep time with (tsc=unstable, as Firecracker's guests are). agree
// checks the second part itself, as the kernel does before it keeps time
// with the counter: on each CPU that the process may run on, paired with
// the first, a thread pinned there reads the counter in turns with one
// pinned on the first, and a reading must never be smaller than the one
// taken before it on the other CPU. What it cannot see, an offset smaller
// than a turn's hand-over (a few hundred nanoseconds in a VM), is within
// what the stamps that use the counter promise; a counter that jumps
// later (a restored snapshot) makes the stamps take a new anchor
// (internal/bus, reanchor).

// agreeTurns is how many readings each CPU of a pair takes.
const agreeTurns = 200

// agreeTimeout bounds one pair's check: a CPU that does not take its turn
// within it (it is busy with other processes) fails the check, and the
// counter is not used.
const agreeTimeout = 50 * time.Millisecond

// agree reports whether the counters of the CPUs that the process may run
// on agree.
func agree() bool {
	// The caller keeps its thread while the pinned sides run, so that
	// neither runs on it: a pinned side that ends on the main thread
	// leaves it pinned for good (Go does not end the main thread).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpus, err := threadsched.Allowed()
	if err != nil || len(cpus) == 0 {
		return false
	}
	for _, c := range cpus[1:] {
		if !pairAgrees(cpus[0], c, rdtscOrdered, rdtscOrdered) {
			return false
		}
	}
	return true
}

// pairAgrees runs the check on CPUs a and b, reading a's counter with
// readA and b's with readB.
func pairAgrees(a, b int, readA, readB func() uint64) bool {
	var (
		last   atomic.Uint64
		turn   atomic.Int32
		failed atomic.Bool
		wg     sync.WaitGroup
	)
	deadline := time.Now().Add(agreeTimeout)
	oneProc := runtime.GOMAXPROCS(0) < 2
	side := func(me int32, cpu int, read func() uint64) {
		defer wg.Done()
		// Not unlocked: the pinned thread ends with the goroutine.
		runtime.LockOSThread()
		if threadsched.Pin(cpu) != nil {
			failed.Store(true)
			return
		}
		for range agreeTurns {
			for spins := 1; turn.Load() != me; spins++ {
				if spins%256 != 0 {
					continue
				}
				if failed.Load() || time.Now().After(deadline) {
					failed.Store(true)
					return
				}
				if oneProc {
					// The other side runs only when this one lets it.
					runtime.Gosched()
				}
			}
			t := read()
			if t < last.Load() {
				failed.Store(true)
				return
			}
			last.Store(t)
			turn.Store(1 - me)
		}
	}
	wg.Add(2)
	go side(0, a, readA)
	go side(1, b, readB)
	wg.Wait()
	return !failed.Load()
}
