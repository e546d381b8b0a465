package executor

import (
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// Priority workers (Options.PriorityWorkers) take the urgent lane, the
// queued subscriptions of a priority above 0, and nothing else; while
// they run (partitioned), the other workers take everything else and
// never the urgent lane. A trigger wakes a priority worker for urgent
// work and another for the rest (wakeForLocked); a worker that finds
// work only the other kind may take wakes one of them before it parks,
// and retires only when nothing at all is left.

// nextUrgent is next for a priority worker: the urgent subscription of
// the highest priority, queued first among its equals (see
// popUrgentLocked). It parks w while there is none and returns nil once
// the executor has drained.
func (e *Executor) nextUrgent(w *worker) *waitset.Entity {
	if x := e.takeRunnable(w); x != nil {
		return x
	}
	for {
		e.mu.Lock()
		x, more := e.dequeueUrgentLocked(w)
		if x != nil {
			if more {
				e.wakeForLocked()
			}
			e.mu.Unlock()
			return x
		}
		w.publish()
		if e.queuedLocked() > 0 || e.held.Len() > 0 || !e.set.Empty() {
			// Work w may not take (what its last run made ready): a
			// worker of the others takes it.
			e.wakeIdleLocked(false)
		} else if s := e.state.Load(); s >= stateDraining && (s == stateDrained || len(e.idle) == int(e.live)-1) {
			e.retireLocked()
			return nil
		}
		if e.parkUrgentLocked(w) {
			<-w.wake
		}
	}
}

// parkUrgentLocked pushes w, a priority worker, on the idle stack and
// reports whether w is to wait for its wake-up: false when an urgent
// subscription was triggered before nidle grew, which the look under the
// lock finds (triggers push, then read nidle). e.mu must be held;
// parkUrgentLocked releases it.
func (e *Executor) parkUrgentLocked(w *worker) bool {
	e.idle = append(e.idle, w)
	e.nidle.Add(1)
	var l waitset.List
	e.set.Fast().TakeAhead(nil, &l)
	e.takeUrgentLocked(&l)
	if len(e.prio.urgent) > 0 {
		e.unpark(w)
		e.mu.Unlock()
		return false
	}
	e.mu.Unlock()
	return true
}

// dequeueUrgentLocked takes the next urgent subscription for w, a priority
// worker, after holding what w finished ready again, and reports whether
// more work is ready. e.mu must be held.
func (e *Executor) dequeueUrgentLocked(w *worker) (x *waitset.Entity, more bool) {
	e.holdLocked(w)
	var l waitset.List
	e.set.Fast().TakeAhead(nil, &l)
	e.takeUrgentLocked(&l)
	x = e.popUrgentLocked()
	if x == nil {
		return nil, false
	}
	if e.obs != nil {
		e.obs.Observe(trace.Event{Op: trace.Dequeue, ID: x.ID(), Worker: w.id})
	}
	return x, len(e.prio.urgent) > 0 || e.queuedLocked() > 0 || e.held.Len() > 0 || !e.set.Empty()
}

// popUrgentLocked takes the urgent subscription of the highest priority,
// queued first among its equals, unless maxStreak dequeues in a row have
// passed over the one queued longest, which is then taken: the bound of
// pickLocked, within the urgent lane. e.mu must be held.
func (e *Executor) popUrgentLocked() *waitset.Entity {
	if len(e.prio.urgent) == 0 {
		return nil
	}
	best := e.bestUrgentLocked()
	switch {
	case best == 0:
		e.prio.ustreak = 0
	case e.prio.ustreak >= maxStreak:
		e.prio.ustreak, best = 0, 0
	default:
		e.prio.ustreak++
	}
	return e.removeUrgentLocked(best)
}

// leftToPriorityLocked reports whether the urgent lane holds work that
// only the priority workers may take. e.mu must be held.
func (e *Executor) leftToPriorityLocked() bool {
	return e.prio.partitioned && len(e.prio.urgent) > 0
}

// wakeForLocked is wake with priority workers running: a priority worker
// for the urgent lane, if anything is in it, and one of the others for
// the rest of the work, if any. e.mu must be held.
func (e *Executor) wakeForLocked() {
	var l waitset.List
	e.set.Fast().TakeAhead(nil, &l)
	e.takeUrgentLocked(&l)
	e.wakeUrgentLocked()
	if e.queuedLocked() > 0 || e.held.Len() > 0 || !e.set.Empty() {
		e.wakeIdleLocked(false)
	}
}

// wakeUrgentLocked wakes a parked priority worker for each subscription
// in the urgent lane, as many as are parked: at once, not each by the one
// before, as a thread's wake-up takes a while (hundreds of microseconds
// on some VMs), and the urgent subscriptions of one trigger (the hot
// path's points transformers) are to run side by side. e.mu must be held.
func (e *Executor) wakeUrgentLocked() {
	for range len(e.prio.urgent) {
		if !e.wakeIdleLocked(true) {
			return
		}
	}
}

// wakeIdleLocked wakes the most recently parked worker that is a priority
// worker, or that is not, if one is parked, and reports whether it woke
// one. e.mu must be held.
func (e *Executor) wakeIdleLocked(priority bool) bool {
	for i := len(e.idle) - 1; i >= 0; i-- {
		w := e.idle[i]
		if w.priority != priority {
			continue
		}
		e.unpark(w)
		e.wakeups.Add(1)
		w.signal()
		return true
	}
	return false
}
