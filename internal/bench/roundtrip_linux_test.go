package bench_test

import (
	"runtime"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// pinTo locks the calling goroutine to its thread and the thread to cpu;
// the returned function restores the thread's CPUs and unlocks it.
func pinTo(cpu int) (unpin func(), err error) {
	runtime.LockOSThread()
	var was, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return func() {
		unix.SchedSetaffinity(0, &was)
		runtime.UnlockOSThread()
	}, nil
}

// BenchmarkCoreRoundTrip measures what moving a cache line between two
// cores costs on this machine, which sets much of the executor's dispatch
// cost (BENCHMARKS.md, "What this machine allows"): two threads pinned to CPUs 0 and 1 pass a
// counter back and forth; ns/op is one round trip, two transfers of the
// line.
func BenchmarkCoreRoundTrip(b *testing.B) {
	if runtime.NumCPU() < 2 {
		b.Skip("needs two CPUs")
	}
	var line struct {
		_ [64]byte
		n atomic.Int64
		_ [64]byte
	}
	unpin, err := pinTo(0)
	if err != nil {
		b.Skipf("cannot pin a thread to CPU 0: %v", err)
	}
	defer unpin()
	done := make(chan error, 1)
	go func() {
		defer close(done)
		unpin, err := pinTo(1)
		if err != nil {
			// Unpinned, the partner still answers: the figure is then
			// not the cores', which the error says.
			done <- err
		} else {
			defer unpin()
		}
		for i := int64(0); i < int64(b.N); i++ {
			for line.n.Load() != 2*i+1 {
			}
			line.n.Store(2*i + 2)
		}
	}()
	b.ResetTimer()
	for i := int64(0); i < int64(b.N); i++ {
		line.n.Store(2*i + 1)
		for line.n.Load() != 2*i+2 {
		}
	}
	if err := <-done; err != nil {
		b.Errorf("cannot pin a thread to CPU 1: %v", err)
	}
}
