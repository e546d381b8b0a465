package waitset

import (
	"sync/atomic"

	"github.com/robotexec/robotexec/internal/trace"
)

// Set is a wait set. Entities registered with it are triggered into it and
// taken out of it in batches by the scheduler.
//
// Entities that enter waiting ∩ wait set are pushed on a lock-free stack,
// one for timers, one for subscriptions and one for urgent subscriptions
// (see [Entity.SetUrgent]); [Set.Take] swaps the stacks out
// at once, so a trigger never waits for the scheduler and the scheduler
// never scans entities that are not ready: the cost of a trigger and of a
// take is independent of how many entities are registered. Package
// executor goes through the set by a faster path too, [Set.Fast].
//
// Its fields are laid out on three cache lines by who writes them: wake and
// obs never change, and every trigger reads them; the stacks change at
// triggers and takes; the counters at registrations and batches. Sharing a
// line, each write would cost every other core its copy of the others.
type Set struct {
	wake func()
	obs  trace.Observer
	_    [64 - 24]byte

	pending [3]atomic.Pointer[Entity] // by stack(): timers, subscriptions, urgent subscriptions
	_       [64 - 24]byte

	ids     atomic.Uint64
	batches atomic.Uint64
	_       [64 - 16]byte
}

// New returns a set. wake, if not nil, is called after every entity that
// enters waiting ∩ wait set, on the triggering goroutine, so that the
// scheduler can wake an idle worker; it must be cheap and must not block.
// obs is robotexec's own tracing of its tests: leave it nil.
func New(wake func(), obs trace.Observer) *Set {
	return &Set{wake: wake, obs: obs}
}

// Register binds e to the set as an entity of kind k and gives it an ID.
// It panics if e is already registered.
func (s *Set) Register(e *Entity, k Kind) {
	if e.set != nil {
		panic("waitset: entity registered twice")
	}
	e.set = s
	e.kind = k
	e.id = s.ids.Add(1)
}

// trace.Observer returns the set's observer, or nil.
func (s *Set) Observer() trace.Observer { return s.obs }

// Empty reports whether no entity is waiting in the wait set.
func (s *Set) Empty() bool {
	return s.pending[0].Load() == nil && s.pending[1].Load() == nil && s.pending[2].Load() == nil
}

// TimersPending reports whether a timer is waiting in the wait set.
func (s *Set) TimersPending() bool { return s.pending[0].Load() != nil }

// stack returns the index of e's pending stack.
func stack(e *Entity) int {
	switch {
	case e.kind == Timer:
		return 0
	case e.urgent:
		return 2
	}
	return 1
}

// ready pushes an entity that just entered waiting ∩ wait set.
func (s *Set) ready(e *Entity) {
	s.push(e)
	if s.wake != nil {
		s.wake()
	}
}

// push is ready without the wake-up.
func (s *Set) push(e *Entity) {
	e.readies++
	n := e.readies // read before the push: once pushed, e belongs to the taker
	p := &s.pending[stack(e)]
	for {
		head := p.Load()
		e.next = head
		if p.CompareAndSwap(head, e) {
			break
		}
	}
	if s.obs != nil {
		s.obs.Observe(trace.Event{Op: trace.Ready, ID: e.ID(), Timer: e.kind == Timer, Seq: n})
	}
}

// TriggerAll triggers every entity of es as one step, so that those that
// enter waiting ∩ wait set land in the same batch: a timer queue uses it for
// the timers that fall due together. It panics, leaving every entity as it
// was, if one is not registered with s.
func (s *Set) TriggerAll(es []*Entity) { s.triggerAll(es, true) }

// triggerAll is TriggerAll, with the set's wake-up if wake is set.
func (s *Set) triggerAll(es []*Entity, wake bool) {
	for _, e := range es {
		if e.set != s {
			// Checked before any entity is touched, so that a misuse
			// leaves every entity as it was.
			panic("waitset: TriggerAll of an entity of another set")
		}
	}
	var first, last [3]*Entity
	var entered []trace.Event // kept only for the observer
	for _, e := range es {
		if !e.enter() {
			continue
		}
		e.readies++
		if s.obs != nil {
			entered = append(entered, trace.Event{Op: trace.Ready, ID: e.ID(), Timer: e.kind == Timer, Seq: e.readies})
		}
		// Build the chains newest first, as single pushes would leave them.
		k := stack(e)
		e.next = first[k]
		if last[k] == nil {
			last[k] = e
		}
		first[k] = e
	}
	if first[0] == nil && first[1] == nil && first[2] == nil {
		return
	}
	for k := range first {
		if first[k] == nil {
			continue
		}
		p := &s.pending[k]
		for {
			head := p.Load()
			last[k].next = head
			if p.CompareAndSwap(head, first[k]) {
				break
			}
		}
	}
	for _, ev := range entered {
		s.obs.Observe(ev)
	}
	if wake && s.wake != nil {
		s.wake()
	}
}

// drain moves pending stack k to the back of l, oldest first.
func (s *Set) drain(k int, l *List) {
	p := &s.pending[k]
	if p.Load() == nil {
		return // no atomic write when there is nothing to take
	}
	head := p.Swap(nil)
	var ready List
	for e := head; e != nil; {
		next := e.next
		e.next = ready.head
		ready.head = e
		if ready.tail == nil {
			ready.tail = e
		}
		ready.n++
		e = next
	}
	l.append(&ready)
}

// Take moves every entity in waiting ∩ wait set to queued and appends them to
// dst as one batch: all timers first, then all urgent subscriptions, then
// all other subscriptions, each in the order they became ready. It returns
// how many it appended and the batch number (counting from 1), or 0, 0 if
// none was ready.
func (s *Set) Take(dst *List) (n int, batch uint64) {
	n, batch, _ = s.take(dst, dst, dst, nil, nil)
	return n, batch
}

// take is Take into timers and subs, taking the urgent subscriptions into
// urgent unless it is nil (they stay for Fast.TakeAhead) and held's
// subscriptions between the two stacks, and counting a take of timers in
// count (see Fast.TakeWith).
func (s *Set) take(timers, urgent, subs, held *List, count *atomic.Int64) (n int, batch uint64, counted bool) {
	var ts, us, hs, ss List
	if count == nil {
		s.drain(0, &ts)
	} else if s.pending[0].Load() != nil {
		count.Add(1) // before the swap: see Fast.TakeWith
		counted = true
		s.drain(0, &ts)
	}
	if urgent != nil {
		s.drain(2, &us)
	}
	if held != nil {
		hs.append(held)
	}
	s.drain(1, &ss)
	n = ts.Len() + us.Len() + hs.Len() + ss.Len()
	if n == 0 {
		return 0, 0, counted
	}
	batch = s.batches.Add(1)
	s.enqueue(&ts, batch, true)
	s.enqueue(&us, batch, true)
	s.enqueue(&hs, batch, false) // queued by Fast.FinishHeld or Fast.Hold
	s.enqueue(&ss, batch, true)
	timers.append(&ts)
	if urgent != nil {
		urgent.append(&us)
	}
	subs.append(&hs)
	subs.append(&ss)
	return n, batch, counted
}

// enqueue moves the entities of l to queued, as part of batch: with take,
// from waiting ∩ wait set; without, they are queued already (held).
func (s *Set) enqueue(l *List, batch uint64, take bool) {
	if !take && s.obs == nil {
		return
	}
	for e := l.head; e != nil; e = e.next {
		if take {
			e.take()
		}
		if s.obs != nil {
			s.obs.Observe(trace.Event{Op: trace.Enqueue, ID: e.ID(), Timer: e.kind == Timer, Batch: batch, Seq: e.readies})
		}
	}
}
