package waitset

import "sync/atomic"

// Set is a wait set. Entities registered with it are triggered into it and
// taken out of it in batches by the scheduler.
//
// Entities that enter waiting ∩ wait set are pushed on a lock-free stack;
// [Set.Take] swaps the whole stack out at once, so a trigger never waits for
// the scheduler and the scheduler never scans entities that are not ready:
// the cost of a trigger and of a take is independent of how many entities
// are registered.
type Set struct {
	pending atomic.Pointer[Entity]
	ids     atomic.Uint64
	batches atomic.Uint64
	wake    func()
	obs     Observer
}

// New returns a set. wake, if not nil, is called after every entity that
// enters waiting ∩ wait set, on the triggering goroutine, so that the
// scheduler can wake an idle worker; it must be cheap and must not block.
// obs, if not nil, receives the set's events and those of its entities.
func New(wake func(), obs Observer) *Set {
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

// Observer returns the set's observer, or nil.
func (s *Set) Observer() Observer { return s.obs }

// Empty reports whether no entity is waiting in the wait set.
func (s *Set) Empty() bool { return s.pending.Load() == nil }

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
	for {
		head := s.pending.Load()
		e.next = head
		if s.pending.CompareAndSwap(head, e) {
			break
		}
	}
	if s.obs != nil {
		s.obs.Observe(Event{Op: Ready, Entity: e, Seq: n})
	}
}

// TriggerAll triggers every entity of es as one step, so that those that
// enter waiting ∩ wait set land in the same batch: a timer queue uses it for
// the timers that fall due together. Every entity must be registered with s.
func (s *Set) TriggerAll(es []*Entity) {
	for _, e := range es {
		if e.set != s {
			// Checked before any entity is touched, so that a misuse
			// leaves every entity as it was.
			panic("waitset: TriggerAll of an entity of another set")
		}
	}
	var first, last *Entity
	var entered []Event // kept only for the observer
	for _, e := range es {
		old := e.word.Or(inSet)
		if old&(inSet|muted) != 0 || old&stateMask != uint32(Waiting) {
			continue
		}
		e.readies++
		if s.obs != nil {
			entered = append(entered, Event{Op: Ready, Entity: e, Seq: e.readies})
		}
		// Build the chain newest first, as single pushes would leave it.
		e.next = first
		if last == nil {
			last = e
		}
		first = e
	}
	if first == nil {
		return
	}
	for {
		head := s.pending.Load()
		last.next = head
		if s.pending.CompareAndSwap(head, first) {
			break
		}
	}
	for _, ev := range entered {
		s.obs.Observe(ev)
	}
	if s.wake != nil {
		s.wake()
	}
}

// Hold puts e, which FinishHeld reported ready, in held, a list of the
// caller's that it guards and later passes to TakeWith: from now on e counts
// as in waiting ∩ wait set. Entities on the set's stack, which became ready
// before e, move to held first, so that held stays in readiness order; when
// the stack is empty, as it mostly is while workers keep the queues busy,
// Hold makes no atomic write.
func (s *Set) Hold(e *Entity, held *List) {
	if s.pending.Load() != nil {
		s.drain(held)
	}
	e.readies++
	held.Push(e)
	if s.obs != nil {
		s.obs.Observe(Event{Op: Ready, Entity: e, Seq: e.readies})
	}
}

// drain moves the set's stack to the back of l, oldest first.
func (s *Set) drain(l *List) {
	if s.pending.Load() == nil {
		return // no atomic write when there is nothing to take
	}
	head := s.pending.Swap(nil)
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
	l.Append(&ready)
}

// Take moves every entity in waiting ∩ wait set to queued and appends them to
// dst as one batch: all timers first, then all subscriptions, each in the
// order they became ready. It returns how many it appended and the batch
// number (counting from 1), or 0, 0 if none was ready.
func (s *Set) Take(dst *List) (n int, batch uint64) { return s.TakeWith(dst, nil) }

// TakeWith is Take that also takes the entities of held (see Hold), which
// became ready before those on the set's stack, leaving held empty.
func (s *Set) TakeWith(dst *List, held *List) (n int, batch uint64) {
	var ready List
	if held != nil {
		ready.Append(held)
	}
	s.drain(&ready)
	if ready.Len() == 0 {
		return 0, 0
	}
	batch = s.batches.Add(1)
	var timers, subs List
	for e := ready.head; e != nil; {
		next := e.next
		e.take()
		if e.kind == Timer {
			timers.Push(e)
		} else {
			subs.Push(e)
		}
		e = next
	}
	n = timers.Len() + subs.Len()
	if s.obs != nil {
		for e := timers.head; e != nil; e = e.next {
			s.obs.Observe(Event{Op: Enqueue, Entity: e, Batch: batch, Seq: e.readies})
		}
		for e := subs.head; e != nil; e = e.next {
			s.obs.Observe(Event{Op: Enqueue, Entity: e, Batch: batch, Seq: e.readies})
		}
	}
	dst.Append(&timers)
	dst.Append(&subs)
	return n, batch
}
