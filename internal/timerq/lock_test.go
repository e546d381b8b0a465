package timerq

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// mutexWait returns how long the process's goroutines have waited in the
// runtime for locks, as the runtime counts it.
func mutexWait() time.Duration {
	s := []metrics.Sample{{Name: "/sync/mutex/wait/total:seconds"}}
	metrics.Read(s)
	return time.Duration(s[0].Value.Float64() * float64(time.Second))
}

// spinFor keeps the calling goroutine's processor for d.
func spinFor(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// contend takes q's lock n times with take, each while a goroutine holds
// it for 30 µs, and returns how long the process waited in the runtime
// for locks meanwhile, and how many of the takes found the lock held
// (the others came after the hold). The holder takes it with lock, so
// that its own takes do not wait there.
func contend(q *Queue, n int, take func()) (waited time.Duration, held int) {
	var holding, taken atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range int64(n) {
			q.lock()
			holding.Store(i + 1)
			spinFor(30 * time.Microsecond)
			q.mu.Unlock()
			for taken.Load() <= i {
			}
		}
	}()
	before := mutexWait()
	for i := range int64(n) {
		for holding.Load() <= i {
		}
		if !q.mu.TryLock() {
			held++
			take()
		}
		q.mu.Unlock()
		taken.Store(i + 1)
	}
	waited = mutexWait() - before
	<-done
	return waited, held
}

// A worker that finds the queue's lock held by a short hold spins for it
// (lock) instead of waiting in the runtime, as sync.Mutex's Lock does,
// whose waiter the unlocking worker's processor then holds (see lock).
// The holder may lose its CPU in the middle of a hold, to another process:
// lock then waits in the runtime after lockSpin, as it should; so the
// test looks for a round of 30 takes, of 20 rounds at most, in which at
// least 20 found the lock held and none waited there. With Lock, every
// such take waits there.
func TestLockSpinsForShortHolds(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	var q Queue
	for round := range 20 {
		waited, held := contend(&q, 30, q.lock)
		t.Logf("round %d: %d takes of 30 found the lock held; waited in the runtime for locks: %v", round, held, waited)
		if held >= 20 && waited == 0 {
			return
		}
	}
	t.Fatal("in no round did lock take a held lock without waiting in the runtime")
}

// A hold longer than lockSpin: lock waits for it in the runtime, and the
// lock stays exclusive.
func TestLockWaitsForLongHolds(t *testing.T) {
	var q Queue
	q.mu.Lock()
	held := true
	go func() {
		spinFor(3 * lockSpin)
		held = false
		q.mu.Unlock()
	}()
	start := time.Now()
	q.lock()
	took := time.Since(start)
	require.False(t, held, "taken only once released")
	q.mu.Unlock()
	require.GreaterOrEqual(t, took, 3*lockSpin)
}
