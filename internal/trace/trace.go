// Package trace is the vocabulary of robotexec's scheduling traces: every
// step of a wait set entity's life ([Op]) as an [Event] that an
// [Observer] records, for the tests that check the scheduling properties
// on recorded traces (package internal/tracecheck) and for the spin
// model's counterexamples. It is robotexec's own: the wait set, the
// queues and the executor emit events to the observer they are given.
package trace

// Op names a step in an entity's life, as recorded by an [Observer].
type Op uint8

const (
	// Ready: the entity entered waiting ∩ wait set (a trigger, or a run
	// that ended with work left). Emitted just after the entity was pushed,
	// so the steps that follow (even its enqueue and run) may be observed
	// before it; Event.Seq numbers an entity's readies, and the Enqueue
	// that takes it carries the same number.
	Ready Op = iota + 1
	// Enqueue: the scheduler took the entity into a run queue, as part of
	// batch Event.Batch.
	Enqueue
	// Dequeue: worker Event.Worker took the entity from a run queue.
	// Enqueue and Dequeue are observed under the run queue's lock, in the
	// order they happen.
	Dequeue
	// Start: the entity is running on worker Event.Worker; for a
	// subscription, Event.Seq is the message it runs.
	Start
	// Finish: the entity's run on worker Event.Worker ended. Emitted before
	// the entity returns to waiting.
	Finish
	// Accept: a subscription accepted message Event.Seq into its queue.
	Accept
	// Drop: a subscription dropped message Event.Seq (zero if the message
	// was refused before it got a number) for Event.Reason.
	Drop
	// Request: the entity, dequeued, queued its request for resource
	// Event.Resource (docs/design.md, Resources), in the order of its
	// resources.
	Request
	// Acquire: the entity's request reached the head of resource
	// Event.Resource's queue: it holds the resource.
	Acquire
	// Release: the entity released resource Event.Resource after its run.
	Release
	// Mute: the entity, whose run published to the overloaded subscription
	// whose ID is Event.Overloaded, will not be scheduled until Unmute.
	Mute
	// Unmute: the entity may be scheduled again, as subscription
	// Event.Overloaded drained below its threshold.
	Unmute
	// Next: the running subscription's run goes on, on the same worker,
	// with its next message, Event.Seq: a run serves a short batch of
	// messages back to back (see package executor's Options.Batch).
	Next
)

// String returns the op's name.
func (o Op) String() string {
	switch o {
	case Ready:
		return "ready"
	case Enqueue:
		return "enqueue"
	case Dequeue:
		return "dequeue"
	case Start:
		return "start"
	case Finish:
		return "finish"
	case Accept:
		return "accept"
	case Drop:
		return "drop"
	case Request:
		return "request"
	case Acquire:
		return "acquire"
	case Release:
		return "release"
	case Mute:
		return "mute"
	case Unmute:
		return "unmute"
	case Next:
		return "next"
	}
	return "invalid"
}

// Event is one step recorded by an [Observer].
type Event struct {
	Op Op
	// ID is the entity's ID, and Timer tells a timer's steps from a
	// subscription's.
	ID     uint64
	Timer  bool
	Batch  uint64 // Enqueue: the batch number
	Worker int    // Dequeue, Start, Finish: the worker
	Seq    uint64 // Start, Accept, Drop: the message's sequence number in its subscription; Ready, Enqueue: the entity's readiness number
	Reason string // Drop: why
	// Resource is the ID of the resource (named by executor.Needs, in
	// the order they were made) that the entity requests, acquires or
	// releases
	// (Request, Acquire, Release).
	Resource uint64
	// Overloaded is the entity ID of the subscription whose queue mutes
	// the entity until it drains (Mute, Unmute).
	Overloaded uint64
}

// Observer receives the steps of entities, for traces, tests and metrics.
// Observe is called synchronously on the goroutine that makes the step, on
// the dispatch path: it must be fast and must not block or call back into the
// executor. The order of calls respects the order of the steps of any one
// entity.
type Observer interface {
	Observe(Event)
}
