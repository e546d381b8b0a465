package executor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/subscribers"
)

// workerLog records which worker ran each callback (Options.Runs).
type workerLog struct {
	mu   sync.Mutex
	runs map[uint64][]int // callback ID → workers, in run order
}

func (l *workerLog) Ran(r executor.Run) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs[r.ID] = append(l.runs[r.ID], r.Worker)
}

func (l *workerLog) workers(id uint64) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.runs[id]...)
}

// While the only other worker runs a callback that does not return, a
// priority worker runs the urgent subscription's callbacks, and only
// them: the subscription of priority 0 waits for the other worker. The
// trace keeps every property, each kind of worker to its lane.
func TestPriorityWorkerServesWhileOthersAreBusy(t *testing.T) {
	rec := &tracecheck.Recorder{}
	log := &workerLog{runs: map[uint64][]int{}}
	ex := executor.New(executor.Options{Workers: 1, PriorityWorkers: 1, Logger: quiet(), Observer: rec, Runs: log})
	bus := new(subscribers.Router)
	started, release := make(chan struct{}), make(chan struct{})
	slow, err := ex.NewOwner("slow", nil).Subscribe(bus, "slow", func(context.Context, subscribers.Message) {
		close(started)
		<-release
	})
	require.NoError(t, err)
	other, err := ex.NewOwner("other", nil).Subscribe(bus, "other", func(context.Context, subscribers.Message) {},
		executor.Depth(10), executor.Overflow(subscribers.Block))
	require.NoError(t, err)
	hotRuns := make(chan struct{}, 10)
	hot, err := ex.NewOwner("hot", nil).Subscribe(bus, "hot", func(context.Context, subscribers.Message) {
		hotRuns <- struct{}{}
	}, executor.Priority(1), executor.Depth(10), executor.Overflow(subscribers.Block))
	require.NoError(t, err)

	stop := run(t, ex)
	publish(t, bus, "slow", "x")
	<-started
	for range 3 {
		publish(t, bus, "other", "x")
	}
	for range 5 {
		publish(t, bus, "hot", "x")
	}
	for i := range 5 {
		select {
		case <-hotRuns:
		case <-time.After(10 * time.Second):
			t.Fatalf("the urgent callback ran %d of 5 times while the other worker was busy", i)
		}
	}
	require.Equal(t, 3, other.Len(), "the subscription of priority 0 waits for the busy worker")
	close(release)
	stop()

	require.Equal(t, []int{1, 1, 1, 1, 1}, log.workers(hot.ID()), "the priority worker (ID 1) ran the urgent callback")
	require.Equal(t, []int{0, 0, 0}, log.workers(other.ID()))
	require.Equal(t, []int{0}, log.workers(slow.ID()))
	require.NoError(t, tracecheck.Check(rec.Steps(), tracecheck.Model{
		Workers: 1, PriorityWorkers: 1, Drained: true, Batch: executor.DefaultBatch,
		Priority: map[uint64]int{hot.ID(): 1}, Streak: executor.MaxStreak,
	}))
}

// The Spin methods run every callback on their caller, urgent ones
// included, priority workers or not.
func TestPriorityWorkersSpin(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 1, PriorityWorkers: 1, Logger: quiet()})
	bus := new(subscribers.Router)
	ran := 0
	_, err := ex.NewOwner("hot", nil).Subscribe(bus, "hot", func(context.Context, subscribers.Message) { ran++ }, executor.Priority(1))
	require.NoError(t, err)
	publish(t, bus, "hot", "x")
	require.Equal(t, 1, ex.SpinAll())
	require.Equal(t, 1, ran)
	require.Equal(t, 2, ex.Workers(), "Run's workers, the priority worker included")
}
