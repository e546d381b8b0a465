package timerq

import "time"

// lockSpin bounds how long lock spins for the queue's lock before it
// waits for it in the runtime.
const lockSpin = 100 * time.Microsecond

// lock takes q.mu for an executor's worker (Call, and the serve and stage
// of Poll and PollWait): where another holds it, it spins for it, up to
// lockSpin, rather than wait in the runtime. Those holds last a few
// microseconds (a serve, a Call, an alarm's setting), but a goroutine
// that waits in the runtime is made runnable again on the processor of
// the goroutine that unlocks, a worker that goes on to run callbacks: it
// runs once another thread takes it from there, and on a virtual machine
// whose other CPU idles that took milliseconds. In 20 s of the reference
// system (examples/referencesystem), 12–88 Calls waited more than 200 µs
// for the lock, up to 5.5 ms, each holding back a timer whose deadline
// had passed; sync.Mutex spins for its lock only briefly, and not at all
// while the waiter's processor has other goroutines to run.
func (q *Queue) lock() {
	if q.mu.TryLock() {
		return
	}
	start := time.Now()
	for {
		// TryLock reads the lock before it writes it: the spin keeps the
		// lock's cache line shared until it is free.
		for range 64 {
			if q.mu.TryLock() {
				return
			}
		}
		if time.Since(start) > lockSpin {
			q.mu.Lock()
			return
		}
	}
}
