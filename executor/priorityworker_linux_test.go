package executor_test

import (
	"bytes"
	"context"
	"log/slog"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
)

// threadSched returns the calling thread's scheduling policy and nice
// value.
func threadSched(t *testing.T) (policy int, nice int) {
	tid := syscall.Gettid()
	p, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETSCHEDULER, uintptr(tid), 0, 0)
	require.Zero(t, errno)
	// The raw getpriority returns 20 - nice.
	n, _, errno := syscall.RawSyscall(syscall.SYS_GETPRIORITY, syscall.PRIO_PROCESS, uintptr(tid), 0)
	require.Zero(t, errno)
	return int(p), 20 - int(n)
}

// realtimeAllowed reports whether this process may put a thread in the
// SCHED_FIFO class: it tries on a thread of its own, which ends with it.
func realtimeAllowed() bool {
	ok := make(chan bool)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		param := struct{ priority int32 }{1}
		_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(syscall.Gettid()), 1, uintptr(unsafe.Pointer(&param)))
		ok <- errno == 0
	}()
	return <-ok
}

// With priority workers, the others' threads run at nice 10; with
// Realtime, the priority workers' in SCHED_FIFO where the OS allows it,
// and where it does not, the executor says so.
func TestPriorityWorkerThreads(t *testing.T) {
	allowed := realtimeAllowed()
	runtime.LockOSThread()
	policy, base := threadSched(t)
	runtime.UnlockOSThread()
	if policy != 0 || base != 0 {
		t.Skipf("this process runs at policy %d, nice %d: the test expects SCHED_OTHER at nice 0", policy, base)
	}
	for _, realtime := range []bool{false, true} {
		var logs bytes.Buffer
		ex := executor.New(executor.Options{Workers: 1, PriorityWorkers: 1, Realtime: realtime,
			Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: new(sync.Mutex)}, nil))})
		bus := new(subscribers.Router)
		type sched struct{ policy, nice int }
		got := make(chan sched, 2)
		_, err := ex.NewOwner("hot", nil).Subscribe(bus, "hot", func(context.Context, subscribers.Message) {
			p, n := threadSched(t)
			got <- sched{p, n}
		}, executor.Priority(1))
		require.NoError(t, err)
		_, err = ex.NewOwner("other", nil).Subscribe(bus, "other", func(context.Context, subscribers.Message) {
			p, n := threadSched(t)
			got <- sched{p, n}
		})
		require.NoError(t, err)
		stop := run(t, ex)
		publish(t, bus, "hot", "x")
		hot := <-got
		publish(t, bus, "other", "x")
		other := <-got
		stop()
		require.Equal(t, sched{0, 10}, other, "a worker other than the priority workers: SCHED_OTHER at nice 10")
		switch {
		case !realtime:
			require.Equal(t, sched{0, 0}, hot, "a priority worker: SCHED_OTHER at nice 0")
		case allowed:
			require.Equal(t, 1, hot.policy, "a priority worker with Realtime: SCHED_FIFO")
			require.NotContains(t, logs.String(), "real-time")
		default:
			require.Equal(t, sched{0, 0}, hot)
			require.Contains(t, logs.String(), "the priority workers run without the real-time class")
		}
		t.Logf("realtime %v (allowed: %v): priority worker %+v, other %+v", realtime, allowed, hot, other)
	}
}
