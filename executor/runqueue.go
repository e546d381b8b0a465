package executor

import (
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// dequeueLocked takes the next entity for w: the head of the run queue,
// after holding what w finished ready again, or, when the run queue is
// empty, the head of a new batch taken from the wait set. It reports
// whether more work is ready: queued, held or in the wait set. e.mu must
// be held.
func (e *Executor) dequeueLocked(w *worker) (x *waitset.Entity, more bool) {
	e.holdLocked(w)
	x = e.popLocked(true)
	if x == nil {
		// The scheduler's step (docs/design.md, Scheduler model): waiting ∩
		// wait set becomes one batch, timers first, only when the run queue
		// is empty, so a subscription that becomes ready waits for at most
		// one run queue's worth of entities before its batch. The timers it
		// drains are counted for the batch check from before they leave the
		// wait set until popLocked has counted them in the lane, as
		// popLocked counts those it takes (the model's GUARD_TAKEWITH,
		// model/README). Only then: a count on every look for work would
		// end the batches of the other workers for no timer.
		n, counted := e.takeBatchLocked(true)
		if n > 0 || len(e.prio.urgent) > 0 {
			x = e.popLocked(false)
		}
		if counted {
			e.timersWaiting.Add(-1)
		}
	}
	if x == nil {
		return nil, false
	}
	if w.reserves && e.holdForTimer(w, x) {
		return nil, false
	}
	if e.obs != nil {
		// Observed under the lock, so that dequeues are recorded
		// in the order they happen.
		e.obs.Observe(trace.Event{Op: trace.Dequeue, ID: x.ID(), Timer: x.Kind() == waitset.Timer, Worker: w.id})
	}
	return x, e.queuedLocked() > 0 || e.held.Len() > 0 || !e.set.Empty()
}

// queuedLocked returns the number of entities in the run queue that a
// worker other than a priority worker may take: with priority workers
// running, the urgent lane is theirs. e.mu must be held.
func (e *Executor) queuedLocked() int {
	n := e.runTimers.Len() + e.runSubs.Len()
	if !e.prio.partitioned {
		n += len(e.prio.urgent)
	}
	return n
}

// popLocked takes the head of the run queue: a timer, if one is queued or
// waiting in the wait set — a due timer starts on the first worker that
// frees, ahead of queued subscriptions — else a subscription (see
// popSubLocked, which form is passed to). e.mu must be held.
func (e *Executor) popLocked(form bool) *waitset.Entity {
	var taking int64
	var urgent waitset.List
	if e.set.TimersPending() {
		// Counted before they leave the wait set: a batch check on another
		// worker (batchEnds, which looks at the wait set first) that finds
		// them gone finds them counted. Found by the model (model/README).
		e.timersWaiting.Add(1)
		taking = 1
		e.set.Fast().TakeAhead(&e.runTimers, &urgent)
	} else {
		e.set.Fast().TakeAhead(nil, &urgent)
	}
	forPriority := e.prio.partitioned && urgent.Len() > 0
	e.takeUrgentLocked(&urgent)
	if forPriority {
		e.wakeUrgentLocked() // the priority workers' lane
	}
	x := e.runTimers.Pop()
	n := int64(e.runTimers.Len())
	delta := n - e.laneTimers - taking
	if x != nil {
		delta++ // taken, not started: still waiting (see dispatch)
	}
	if delta != 0 {
		e.timersWaiting.Add(delta)
	}
	e.laneTimers = n
	if x != nil {
		return x
	}
	return e.popSubLocked(form)
}

// holdLocked moves the entity w finished ready again, if any, into the
// held list, where the next batch takes it. e.mu must be held.
func (e *Executor) holdLocked(w *worker) {
	if x := w.requeue; x != nil {
		w.requeue = nil
		e.set.Fast().Hold(x, &e.held)
	}
}
