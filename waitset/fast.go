package waitset

import (
	"sync/atomic"

	"github.com/robotexec/robotexec/internal/trace"
)

// Fast is package executor's fast path through a set: the steps its
// workers take in place of [Entity.Trigger], [Set.TriggerAll],
// [Entity.Finish] and [Set.Take] where the model's step would cost them a
// wake-up, an atomic operation or a wait for the next batch. Each keeps the
// model's states and records the same events for an [trace.Observer]; only who
// does the work changes. Package executor is Fast's user, and so are
// packages timers and subscribers on its behalf, when a worker serves the
// timer queue or publishes from a callback. A scheduler of one's own needs
// none of it: Trigger, Take, Start and Finish are the model.
//
// Get a Fast with [Set.Fast]; it is a handle on the set, free to make and to
// copy. The zero Fast is not usable.
type Fast struct{ s *Set }

// Fast returns the executor's fast path through s.
func (s *Set) Fast() Fast { return Fast{s} }

// TriggerQuiet is [Entity.Trigger] without the set's wake-up. A subscription
// that a running callback publishes to calls it (via
// a publication under a run's context): the run's worker looks for work, and wakes
// others if there is more, as soon as the callback returns, so the
// subscription stays on that worker, in its cache (docs/design.md, Idle
// workers and hand-off). It panics if e is not registered with the set.
func (f Fast) TriggerQuiet(e *Entity) bool {
	if e.set != f.s {
		panic("waitset: TriggerQuiet of an entity of another set")
	}
	if !e.enter() {
		return false
	}
	f.s.push(e)
	return true
}

// TriggerAllQuiet is [Set.TriggerAll] without the set's wake-up, for the
// timers that a worker serves when it polls the timer queue
// (timerq.Fast.Poll): that worker takes them itself next, as with
// TriggerQuiet.
func (f Fast) TriggerAllQuiet(es []*Entity) { f.s.triggerAll(es, false) }

// FinishHeld is [Entity.Finish] for a worker that keeps the entity it
// finishes in a list of the scheduler's own instead of the set's stack,
// saving the stack's atomic operations: when it reports true, the caller
// must pass e to [Fast.Hold] and later take it with [Fast.TakeWith].
//
// A subscription that FinishHeld reports ready moves straight to queued, in
// the same atomic step, as it will be taken without fail: the model's
// waiting ∩ wait set → queued of its next batch costs nothing more then
// (its events are still observed when TakeWith takes it). A trigger
// meanwhile keeps it in the wait set, as for any queued entity, and makes
// it ready again after its next run; in the model it would add nothing.
// No trigger reaches a held subscription of package internal/bus, which
// triggers only a queue that was empty: a held one has a message left. An
// urgent subscription is not held: it goes back to waiting ∩ wait set, as
// a timer does, for TakeAhead.
func (f Fast) FinishHeld(e *Entity, more bool) bool { return e.finish(more, true) }

// Hold puts e, an entity that FinishHeld reported ready, in held, a list of
// the scheduler's that it guards and later passes to TakeWith: from now on
// e counts as in waiting ∩ wait set for the scheduler, though a
// subscription's state is queued already (see FinishHeld). Subscriptions
// on the set's stack, which became ready before e, move to held first, so
// that held stays in readiness order; when the stack is empty, as it mostly
// is while workers keep the queues busy, Hold makes no atomic write. A
// timer or an urgent subscription is pushed on its stack instead, for
// TakeAhead. It panics if e is not
// registered with the set.
func (f Fast) Hold(e *Entity, held *List) {
	s := f.s
	if e.set != s {
		panic("waitset: Hold of an entity of another set")
	}
	if e.kind == Timer || e.urgent {
		s.push(e)
		return
	}
	if s.pending[1].Load() != nil {
		var l List
		s.drain(1, &l)
		for x := l.head; x != nil; x = x.next {
			x.take()
		}
		held.append(&l)
	}
	e.readies++
	held.Push(e)
	if s.obs != nil {
		s.obs.Observe(trace.Event{Op: trace.Ready, ID: e.ID(), Timer: e.kind == Timer, Seq: e.readies})
	}
}

// TakeWith is [Set.Take] into two lists, the executor's two lanes timers
// and subs (which may be the same list), that also takes the subscriptions
// of held (see Hold), which became ready before those on the set's stack,
// leaving held empty.
//
// With count not nil, TakeWith adds 1 to it before any timer leaves the
// set's stack and reports counted: a reader that looks at
// [Set.TimersPending] first and at count next finds a timer taken by
// TakeWith in one or the other until the caller has counted the timers
// and takes the 1 back. With no timer pending it leaves count alone and
// takes none, not even one pushed meanwhile, which stays pending.
func (f Fast) TakeWith(timers, subs, held *List, count *atomic.Int64) (n int, batch uint64, counted bool) {
	return f.s.take(timers, nil, subs, held, count)
}

// TakeAhead is [Set.Take] for what runs ahead of the batch in the run
// queue: the timers, into timers, unless it is nil, and the urgent
// subscriptions (see [Entity.SetUrgent]), into urgent; together they form
// a batch of their own. The executor takes them at every dequeue, so that
// a due timer starts on the first worker that frees, ahead of the
// subscriptions already queued, and an urgent subscription next.
func (f Fast) TakeAhead(timers, urgent *List) (n int, batch uint64) {
	s := f.s
	var ts, us List
	if timers != nil {
		s.drain(0, &ts)
	}
	s.drain(2, &us)
	n = ts.Len() + us.Len()
	if n == 0 {
		return 0, 0
	}
	batch = s.batches.Add(1)
	s.enqueue(&ts, batch, true)
	s.enqueue(&us, batch, true)
	if timers != nil {
		timers.append(&ts)
	}
	urgent.append(&us)
	return n, batch
}
