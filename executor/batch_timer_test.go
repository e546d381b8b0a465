package executor_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// TestBatchEndsWhenTimerDue checks that a run ends when a timer becomes
// ready during it: the first callback of a batch advances the simulated
// clock to a one-shot timer's deadline, and the timer runs right after
// that callback, before the rest of the batch (without the check it would
// run after all 8 messages).
func TestBatchEndsWhenTimerDue(t *testing.T) {
	const msgs = 8
	clock := timers.NewSim(epoch)
	rec := &tracecheck.Recorder{}
	ex := executor.New(executor.Options{
		Workers: 1, Clock: clock, BatchBudget: time.Hour, Logger: quiet(),
		Observer: rec,
	})
	o := ex.NewOwner("n", ex.NewGroup("r", executor.Reentrant))
	bus := new(subscribers.Router)
	log := newCallLog(msgs + 1)
	const delay = 10 * time.Millisecond
	tm, err := o.OneShot(delay, func(ctx context.Context, _ timers.Event) { log.add("timer") })
	require.NoError(t, err)
	s, err := o.Subscribe(bus, "m", func(ctx context.Context, m subscribers.Message) {
		if string(m.Payload) == "1" {
			clock.Advance(delay) // the timer falls due: its alarm fires here
		}
		log.add("m" + string(m.Payload))
	}, executor.Depth(64))
	require.NoError(t, err)
	deliver(t, s, msgs)
	stop := run(t, ex)
	log.wait(t)
	stop()

	require.Equal(t, []string{"m1", "timer", "m2", "m3", "m4", "m5", "m6", "m7", "m8"}, log.get())
	require.Zero(t, executor.TimersWaiting(ex))
	steps := rec.Steps()
	require.Equal(t, []int{1, msgs - 1}, subRuns(steps)[s.ID()], "the first run ends at the timer")
	require.Equal(t, 1, countOps(steps, trace.Start, tm.ID()))
	require.NoError(t, tracecheck.Check(steps, tracecheck.Model{Workers: 1, Drained: true, Batch: executor.DefaultBatch}))
}

// dequeueSignal records a trace and closes dequeued when the entity whose
// ID is id is first dequeued.
type dequeueSignal struct {
	tracecheck.Recorder
	id       atomic.Uint64
	once     sync.Once
	dequeued chan struct{}
}

func (d *dequeueSignal) Observe(ev trace.Event) {
	d.Recorder.Observe(ev)
	if ev.Op == trace.Dequeue && ev.ID == d.id.Load() {
		d.once.Do(func() { close(d.dequeued) })
	}
}

// TestBatchEndsWhenTimerWaitsForItsGroup checks that a batch ends for a due
// timer that another worker has already taken from the wait set: a node's
// timer and subscription share the node's mutually exclusive group; while
// the subscription's batch runs, the timer falls due, the idle worker
// dequeues it and queues it on the busy group. The batch must end after the
// callback running then, so the timer runs before the second message.
func TestBatchEndsWhenTimerWaitsForItsGroup(t *testing.T) {
	const msgs = 8
	clock := timers.NewSim(epoch)
	obs := &dequeueSignal{dequeued: make(chan struct{})}
	ex := executor.New(executor.Options{
		Workers: 2, Clock: clock, BatchBudget: time.Hour, Logger: quiet(),
		Observer: obs,
	})
	o := ex.NewOwner("node", nil) // its default group: mutually exclusive
	bus := new(subscribers.Router)
	log := newCallLog(msgs + 1)
	const delay = 10 * time.Millisecond
	tm, err := o.OneShot(delay, func(ctx context.Context, _ timers.Event) { log.add("timer") })
	require.NoError(t, err)
	obs.id.Store(tm.ID())
	s, err := o.Subscribe(bus, "m", func(ctx context.Context, m subscribers.Message) {
		if string(m.Payload) == "1" {
			clock.Advance(delay)
			select {
			case <-obs.dequeued: // the other worker took the timer
			case <-time.After(batchWait):
				t.Error("the timer was not dequeued")
			}
			// and queues it on the group, which this callback holds:
			// until then this worker may not know of it, and runs the
			// group's next message if the other worker is preempted.
			queued := time.Now().Add(batchWait)
			for executor.Queued(o.DefaultGroup()) < 2 && time.Now().Before(queued) {
				time.Sleep(10 * time.Microsecond)
			}
			if executor.Queued(o.DefaultGroup()) < 2 {
				t.Error("the timer was not queued on the group")
			}
		}
		log.add("m" + string(m.Payload))
	}, executor.Depth(64))
	require.NoError(t, err)
	deliver(t, s, msgs)
	stop := run(t, ex)
	log.wait(t)
	stop()

	require.Equal(t, []string{"m1", "timer", "m2", "m3", "m4", "m5", "m6", "m7", "m8"}, log.get())
	require.Zero(t, executor.TimersWaiting(ex))
	steps := obs.Steps()
	require.Equal(t, []int{1, msgs - 1}, subRuns(steps)[s.ID()], "the first run ends at the timer")
	require.NoError(t, tracecheck.Check(steps, tracecheck.Model{
		Workers: 2, Drained: true, Batch: executor.DefaultBatch,
		Group: map[uint64]string{s.ID(): "node", tm.ID(): "node"},
	}))
}

// TestBatchEndsWhenTimerWaitsInTheLane checks that a batch ends for a due
// timer waiting in the run queue's timer lane: two timers of a reentrant
// group fall due during the subscription's first callback; the idle worker
// takes both from the wait set and runs one, which blocks; the batch must
// end so that its worker runs the other before the second message.
func TestBatchEndsWhenTimerWaitsInTheLane(t *testing.T) {
	const msgs = 8
	clock := timers.NewSim(epoch)
	rec := &tracecheck.Recorder{}
	ex := executor.New(executor.Options{
		Workers: 2, Clock: clock, BatchBudget: time.Hour, Logger: quiet(),
		Observer: rec,
	})
	o := ex.NewOwner("n", ex.NewGroup("r", executor.Reentrant))
	bus := new(subscribers.Router)
	log := newCallLog(msgs + 1)
	const delay = 10 * time.Millisecond
	var calls atomic.Int32
	firstStarted, release := make(chan struct{}), make(chan struct{})
	timer := func(ctx context.Context, _ timers.Event) {
		if calls.Add(1) == 1 {
			close(firstStarted)
			<-release // holds its worker
			return
		}
		log.add("timer")
	}
	for range 2 {
		_, err := o.OneShot(delay, timer)
		require.NoError(t, err)
	}
	s, err := o.Subscribe(bus, "m", func(ctx context.Context, m subscribers.Message) {
		if string(m.Payload) == "1" {
			clock.Advance(delay)
			select {
			case <-firstStarted: // the other worker runs one timer
			case <-time.After(batchWait):
				t.Error("no timer started")
			}
		}
		log.add("m" + string(m.Payload))
	}, executor.Depth(64))
	require.NoError(t, err)
	deliver(t, s, msgs)
	stop := run(t, ex)
	log.wait(t)
	close(release)
	stop()

	require.Equal(t, []string{"m1", "timer", "m2", "m3", "m4", "m5", "m6", "m7", "m8"}, log.get())
	require.Zero(t, executor.TimersWaiting(ex))
	require.Equal(t, []int{1, msgs - 1}, subRuns(rec.Steps())[s.ID()], "the first run ends at the timer")
	require.NoError(t, tracecheck.Check(rec.Steps(), tracecheck.Model{Workers: 2, Drained: true, Batch: executor.DefaultBatch}))
}
