package executor_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/threadsched"
	"github.com/robotexec/robotexec/subscribers"
)

// With PinWorkers, each worker runs on one CPU of the process's, the
// workers on CPUs in turn: two workers, both busy at once, on two
// distinct CPUs where the process has two or more; other threads keep
// the process's mask.
func TestPinWorkers(t *testing.T) {
	runtime.LockOSThread()
	mask, err := threadsched.Allowed()
	runtime.UnlockOSThread()
	require.NoError(t, err)
	ex := executor.New(executor.Options{Workers: 2, PinWorkers: true, Logger: quiet()})
	bus := new(subscribers.Router)
	var both sync.WaitGroup
	both.Add(2)
	got := make(chan []int, 2)
	for _, topic := range []string{"a", "b"} {
		_, err := ex.NewOwner(topic, nil).Subscribe(bus, topic, func(context.Context, subscribers.Message) {
			cpus, err := threadsched.Allowed()
			if err != nil {
				cpus = nil
			}
			both.Done()
			if !waitGroup(&both, 10*time.Second) {
				cpus = nil // the callbacks did not run at once, on two workers
			}
			got <- cpus
		})
		require.NoError(t, err)
	}
	stop := run(t, ex)
	publish(t, bus, "a", "x")
	publish(t, bus, "b", "x")
	a, b := <-got, <-got
	stop()
	require.Len(t, a, 1, "a worker runs on one CPU")
	require.Len(t, b, 1, "a worker runs on one CPU")
	require.Subset(t, mask, []int{a[0], b[0]}, "the workers' CPUs are the process's")
	if len(mask) >= 2 {
		require.ElementsMatch(t, mask[:2], []int{a[0], b[0]}, "two workers: the process's first two CPUs, one each")
	}
	runtime.LockOSThread()
	after, err := threadsched.Allowed()
	runtime.UnlockOSThread()
	require.NoError(t, err)
	require.Equal(t, mask, after, "other threads keep the process's mask")
	t.Logf("process CPUs %v, workers on %v and %v", mask, a, b)
}

// waitGroup waits for wg, and reports whether it was done within d.
func waitGroup(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
