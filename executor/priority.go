package executor

import "github.com/robotexec/robotexec/waitset"

// maxStreak is the most subscription dequeues in a row that pass over the
// subscription queued longest: the next goes to it. It bounds the wait of
// a callback of low priority while callbacks of a higher one keep coming
// (docs/design.md, Priorities).
const maxStreak = 16

// priorities is the run queue's urgent lane, the queued subscriptions of
// a priority above 0, in the order they were queued, and what the choice
// among the queued subscriptions keeps: stamps counts the urgent lane's
// entries and the batches, batchAt is the stamp of runSubs' batch, and
// streak counts the subscription dequeues in a row that passed over the
// one queued longest (see pickLocked). e.mu guards them.
type priorities struct {
	urgent  []*waitset.Entity
	stamps  uint64
	batchAt uint64
	streak  int
	// partitioned is set while Run's priority workers run
	// (Options.PriorityWorkers): they alone take the urgent lane.
	partitioned bool
	// ustreak is streak for the priority workers' choice, which is
	// among the urgent lane only (see popUrgentLocked).
	ustreak int
}

// takeUrgentLocked queues the urgent subscriptions of l, taken from the
// wait set, in the urgent lane. e.mu must be held.
func (e *Executor) takeUrgentLocked(l *waitset.List) {
	for x := l.Pop(); x != nil; x = l.Pop() {
		e.prio.stamps++
		x.Data.(*entity).stamp = e.prio.stamps
		e.prio.urgent = append(e.prio.urgent, x)
	}
}

// takeBatchLocked takes a batch from the wait set into the run queue's
// lanes (waitset.Fast.TakeWith), with count as TakeWith's, and stamps it.
// e.mu must be held.
func (e *Executor) takeBatchLocked(count bool) (n int, counted bool) {
	var c = &e.timersWaiting
	if !count {
		c = nil
	}
	had := e.runSubs.Len()
	n, _, counted = e.set.Fast().TakeWith(&e.runTimers, &e.runSubs, &e.held, c)
	if had == 0 && e.runSubs.Len() > 0 {
		e.prio.stamps++
		e.prio.batchAt = e.prio.stamps
	}
	return n, counted
}

// popSubLocked takes the next subscription of the run queue: the batch's
// head while no urgent subscription is queued, else the choice of
// pickLocked. With form set it returns nil, to have the next batch taken
// first, when the batch's lane is empty and subscriptions wait in the
// wait set: an urgent subscription passes over them only once they are
// queued, and counted (see pickLocked). e.mu must be held.
func (e *Executor) popSubLocked(form bool) *waitset.Entity {
	if len(e.prio.urgent) == 0 || e.prio.partitioned {
		x := e.runSubs.Pop()
		if x != nil && e.prio.streak != 0 {
			e.prio.streak = 0 // queued longest; no write while it stays 0
		}
		return x
	}
	if form && e.runSubs.Len() == 0 && (e.held.Len() > 0 || !e.set.Empty()) {
		return nil
	}
	return e.pickLocked()
}

// pickLocked chooses among the queued subscriptions, some of them urgent:
// the urgent one of the highest priority, queued first among its equals,
// unless maxStreak dequeues in a row have passed over the subscription
// queued longest, which is then taken. The batch's subscriptions were
// queued together, with one stamp, and leave in their order: its head
// stands for them. e.mu must be held.
func (e *Executor) pickLocked() *waitset.Entity {
	best := e.bestUrgentLocked()
	batchFirst := e.runSubs.Len() > 0 && e.prio.batchAt < e.prio.urgent[0].Data.(*entity).stamp
	switch {
	case best == 0 && !batchFirst:
		e.prio.streak = 0 // the best is the one queued longest
	case e.prio.streak >= maxStreak:
		e.prio.streak = 0
		if batchFirst {
			return e.runSubs.Pop()
		}
		best = 0
	default:
		e.prio.streak++
	}
	return e.removeUrgentLocked(best)
}

// bestUrgentLocked returns the index in the urgent lane, which must not
// be empty, of its subscription of the highest priority, queued first
// among its equals. e.mu must be held.
func (e *Executor) bestUrgentLocked() int {
	best := 0
	for i, x := range e.prio.urgent {
		if x.Data.(*entity).priority > e.prio.urgent[best].Data.(*entity).priority {
			best = i
		}
	}
	return best
}

// removeUrgentLocked takes entry i out of the urgent lane and returns it.
// e.mu must be held.
func (e *Executor) removeUrgentLocked(i int) *waitset.Entity {
	x := e.prio.urgent[i]
	copy(e.prio.urgent[i:], e.prio.urgent[i+1:])
	e.prio.urgent[len(e.prio.urgent)-1] = nil
	e.prio.urgent = e.prio.urgent[:len(e.prio.urgent)-1]
	return x
}
