package testenv

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// BusyLoops starts n goroutines that keep a thread busy each, with
// GOMAXPROCS raised by n so that the test's own goroutines keep their
// processors, and returns the function that stops them: the CPU load of
// the tests that must hold under it.
func BusyLoops(n int) (stop func()) {
	prev := runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + n)
	var done atomic.Bool
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for !done.Load() {
			}
		})
	}
	return func() {
		done.Store(true)
		wg.Wait()
		runtime.GOMAXPROCS(prev)
	}
}
