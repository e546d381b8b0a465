package waitset

import "sync/atomic"

// Kind says what an entity is; the scheduler puts timers before
// subscriptions within a batch.
type Kind uint8

const (
	// Timer is a periodic or one-shot timer.
	Timer Kind = iota + 1
	// Subscription is a subscription with its own message queue.
	Subscription
)

// String returns "timer" or "subscription".
func (k Kind) String() string {
	switch k {
	case Timer:
		return "timer"
	case Subscription:
		return "subscription"
	}
	return "unknown"
}

// State is the scheduling state of an entity.
type State uint32

const (
	// Waiting entities are neither queued nor running.
	Waiting State = 0
	// Queued entities are in a run queue, taken from the wait set.
	Queued State = 1
	// Running entities have a callback running on a worker.
	Running State = 2
)

// String returns the state's name.
func (s State) String() string {
	switch s {
	case Waiting:
		return "waiting"
	case Queued:
		return "queued"
	case Running:
		return "running"
	}
	return "invalid"
}

// The state word of an entity: the low two bits hold the State, inSet marks
// membership of the wait set. One word lets a trigger decide with a single
// atomic operation whether the entity enters waiting ∩ wait set.
const (
	stateMask uint32 = 0b11
	inSet     uint32 = 0b100
	// muted entities are not pushed when they enter the wait set: they
	// stay there, unscheduled, until Unmute (backpressure,
	// docs/design.md, Resources).
	muted uint32 = 0b1000
)

// Entity is the schedulable part of a timer or a subscription. Embed it and
// register it with [Set.Register] before triggering it.
//
// An Entity takes two cache lines, when its container is aligned to them
// (subscriptions and timers are): what never changes after registration,
// which producers and workers read at every message, and what changes at
// every trigger and run. Sharing a line, each run would cost a producer
// its copy of the set and of Data.
type Entity struct {
	set    *Set
	id     uint64
	kind   Kind
	urgent bool
	// Data is the scheduler's handle on what the entity runs (the executor
	// stores its callback record here). The wait set never reads it.
	Data any
	_    [64 - 40]byte

	word atomic.Uint32
	// next links the entity into whichever single structure holds it: the
	// set's pending stack, a run queue or a group queue. An entity is in at
	// most one of them at a time, so one link suffices and nothing is
	// allocated per trigger.
	next *Entity
	// readies counts the times the entity entered waiting ∩ wait set. Only
	// the goroutine that makes it ready writes it, and the state machine
	// orders those goroutines one after another.
	readies uint64
	_       [64 - 24]byte
}

// ID returns the entity's identifier, unique within its set and never zero
// once registered.
func (e *Entity) ID() uint64 { return e.id }

// Kind returns what the entity is.
func (e *Entity) Kind() Kind { return e.kind }

// SetUrgent marks a subscription urgent, or not, before it is registered:
// an urgent subscription that becomes ready waits on a stack of its own,
// which [Fast.TakeAhead] takes ahead of the batch, and [Set.Take] puts
// after the timers and before the other subscriptions. The executor marks
// the subscriptions of a priority above 0. It panics once e is registered.
func (e *Entity) SetUrgent(urgent bool) {
	if e.set != nil {
		panic("waitset: SetUrgent of a registered entity")
	}
	e.urgent = urgent
}

// Set returns the set the entity is registered with, or nil.
func (e *Entity) Set() *Set { return e.set }

// State returns the entity's current scheduling state.
func (e *Entity) State() State { return State(e.word.Load() & stateMask) }

// InWaitSet reports whether the entity has been triggered and not yet taken
// by the scheduler (or was triggered again while queued or running).
func (e *Entity) InWaitSet() bool { return e.word.Load()&inSet != 0 }

// Trigger adds the entity to the wait set. It reports whether the entity
// entered waiting ∩ wait set, that is, whether this trigger made it ready to
// be taken; a trigger on an entity already in the wait set adds nothing, and
// a trigger on a queued or running entity keeps it in the wait set until it
// returns to waiting.
func (e *Entity) Trigger() bool {
	if !e.enter() {
		return false
	}
	e.set.ready(e)
	return true
}

// enter adds the entity to the wait set and reports whether it entered
// waiting ∩ wait set, unmuted: whether the trigger made it ready.
func (e *Entity) enter() bool {
	old := e.word.Or(inSet)
	return old&(inSet|muted) == 0 && old&stateMask == uint32(Waiting)
}

// muted reports whether the entity is muted.
func (e *Entity) muted() bool { return e.word.Load()&muted != 0 }

// Mute keeps the entity from being scheduled until Unmute: triggers still
// put it in the wait set, but it is not made ready. The executor mutes an
// entity during its run, so that it takes effect when the run ends.
func (e *Entity) Mute() { e.word.Or(muted) }

// Unmute lets a muted entity be scheduled again; if it is waiting in the
// wait set, it becomes ready, and Unmute reports true.
func (e *Entity) Unmute() bool {
	for {
		old := e.word.Load()
		if old&muted == 0 {
			return false
		}
		next := old &^ muted
		if e.word.CompareAndSwap(old, next) {
			if next&stateMask == uint32(Waiting) && next&inSet != 0 {
				e.set.ready(e)
				return true
			}
			return false
		}
	}
}

// Start moves a queued entity to running. It panics if the entity is not
// queued: the scheduler handed it to two workers.
func (e *Entity) Start() {
	for {
		old := e.word.Load()
		if old&stateMask != uint32(Queued) {
			panic("waitset: start of an entity that is " + State(old&stateMask).String())
		}
		if e.word.CompareAndSwap(old, old&^stateMask|uint32(Running)) {
			return
		}
	}
}

// Finish returns a running entity to waiting. more says that the entity has
// work left (a subscription whose queue is not empty): it stays in the wait
// set. If the entity is in the wait set after the run, because of more or of
// a trigger during the run, it is ready again and Finish reports true.
func (e *Entity) Finish(more bool) bool {
	if e.finish(more, false) {
		e.set.ready(e)
		return true
	}
	return false
}

// finish moves a running entity to waiting, or, held and ready again, a
// subscription to queued (see Fast.FinishHeld); it reports whether the
// entity is ready again.
func (e *Entity) finish(more, held bool) bool {
	for {
		old := e.word.Load()
		if old&stateMask != uint32(Running) {
			panic("waitset: finish of an entity that is " + State(old&stateMask).String())
		}
		next := old &^ stateMask
		if more {
			next |= inSet
		}
		ready := next&inSet != 0 && next&muted == 0
		if held && ready && e.kind != Timer && !e.urgent {
			next = next&^inSet | uint32(Queued)
		}
		if e.word.CompareAndSwap(old, next) {
			return ready
		}
	}
}

// take moves an entity from waiting ∩ wait set to queued.
func (e *Entity) take() {
	for {
		old := e.word.Load()
		if old&stateMask != uint32(Waiting) || old&inSet == 0 {
			panic("waitset: take of an entity that is not waiting in the wait set")
		}
		if e.word.CompareAndSwap(old, old&^(stateMask|inSet)|uint32(Queued)) {
			return
		}
	}
}
