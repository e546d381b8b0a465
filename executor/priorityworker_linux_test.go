package executor_test

import (
	"bytes"
	"context"
	"log/slog"
	"runtime"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/threadsched"
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

// With priority workers, the others' threads run at nice 10 (or the
// process's own nice, where it is above 10 and may not be lowered), the
// priority workers' as the process's; with Realtime, the priority
// workers' in SCHED_FIFO where the OS allows it, and where it does not,
// the executor says so.
func TestPriorityWorkerThreads(t *testing.T) {
	allowed := threadsched.RealtimePermitted() == nil
	runtime.LockOSThread()
	policy, base := threadSched(t)
	runtime.UnlockOSThread()
	type sched struct{ policy, nice int }
	own := sched{policy, base}
	for _, realtime := range []bool{false, true} {
		var logs bytes.Buffer
		ex := executor.New(executor.Options{Workers: 1, PriorityWorkers: 1, Realtime: realtime,
			Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: new(sync.Mutex)}, nil))})
		bus := new(subscribers.Router)
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
		require.Equal(t, own.policy, other.policy, "a worker other than the priority workers keeps the process's policy")
		require.GreaterOrEqual(t, other.nice, 10, "a worker other than the priority workers: nice 10")
		require.LessOrEqual(t, other.nice, max(base, 10))
		switch {
		case !realtime:
			require.Equal(t, own, hot, "a priority worker: as the process")
		case allowed:
			require.Equal(t, 1, hot.policy, "a priority worker with Realtime: SCHED_FIFO")
			require.NotContains(t, logs.String(), "real-time")
		default:
			require.Equal(t, own, hot)
			require.Contains(t, logs.String(), "the priority workers run without the real-time class")
		}
		t.Logf("realtime %v (allowed: %v): priority worker %+v, other %+v", realtime, allowed, hot, other)
	}
}
