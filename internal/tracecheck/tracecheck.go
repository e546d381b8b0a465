// Package tracecheck records the scheduling steps of an executor and checks
// the properties of docs/design.md (Properties checked) on the recorded
// trace: the lifecycle of every entity (waiting → queued → running →
// waiting, never two at once; a subscription's run serves at most
// Model.Batch messages, on one worker; a worker runs one entity at a time),
// exclusion within mutually exclusive groups, timers first within a batch,
// FIFO per subscription with every accepted message run or counted as
// dropped, the starvation bound of package executor, counted in dequeues so
// that it holds on any schedule, and the invariants for resources
// (UniqueAcquisition, RunningImplication, FIFO per resource, ordered
// acquisition) and muting (a muted entity is not scheduled; every mute
// ends).
//
// [Messages] checks the message path on what a workload's publishers sent
// and its subscriptions' callbacks received: each message exactly once,
// each publisher's in order. [ChromeTrace] checks a Chrome trace as
// package chrometrace writes it, for the tests of the trace's writers.
//
// It is a test helper: the recorder serializes every step behind one mutex.
package tracecheck

import (
	"errors"
	"fmt"
	"sync"

	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// Step is one recorded event with its place in the trace.
type Step struct {
	trace.Event
	Index int
	Kind  waitset.Kind
}

// Recorder is a trace.Observer that keeps every event in the order the
// calls were made. Calls are serialized, so the order respects
// happens-before between steps. The zero Recorder is ready to use.
type Recorder struct {
	mu    sync.Mutex
	steps []Step
}

// Observe records ev.
func (r *Recorder) Observe(ev trace.Event) {
	r.mu.Lock()
	kind := waitset.Subscription
	if ev.Timer {
		kind = waitset.Timer
	}
	r.steps = append(r.steps, Step{Event: ev, Index: len(r.steps), Kind: kind})
	r.mu.Unlock()
}

// Steps returns a copy of the trace.
func (r *Recorder) Steps() []Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Step(nil), r.steps...)
}

// Model tells the checker what the trace ran on.
type Model struct {
	// Workers is the number of workers (1 for spin calls).
	Workers int
	// Group maps an entity ID to the name of its mutually exclusive group;
	// entities absent from it are in no such group.
	Group map[uint64]string
	// Drained says the executor has stopped and drained: every entity must
	// be back in waiting and every accepted message run or dropped.
	Drained bool
	// Entities is the number of registered entities and Timers how many of
	// them are timers; zero means count those seen in the trace.
	Entities, Timers int
	// Batch is the most messages a subscription's run may serve (the
	// executor's Options.Batch); 0 means 1.
	Batch int
	// Priority maps a subscription's ID to its priority, for those above
	// 0; Streak is the most subscription dequeues in a row that may pass
	// over the subscription queued longest (the executor's bound). With
	// none, every subscription is of priority 0.
	Priority map[uint64]int
	Streak   int
	// PriorityWorkers is the number of priority workers, whose IDs
	// follow the Workers' (the executor's Options.PriorityWorkers): they
	// dequeue only urgent subscriptions (a priority above 0), by
	// priority within Streak, and the others never dequeue one.
	PriorityWorkers int
}

// maxErrors caps the report.
const maxErrors = 20

type checker struct {
	m    Model
	errs []error
}

func (c *checker) failf(format string, args ...any) {
	if len(c.errs) < maxErrors {
		c.errs = append(c.errs, fmt.Errorf(format, args...))
	}
}

// Check checks every property on steps and returns every violation found
// (up to a cap), joined, or nil.
func Check(steps []Step, m Model) error {
	c := &checker{m: m}
	if c.m.Workers <= 0 {
		c.m.Workers = 1
	}
	if c.m.Batch <= 0 {
		c.m.Batch = 1
	}
	c.countEntities(steps)
	c.lifecycle(steps)
	c.groups(steps)
	c.timersFirst(steps)
	c.fifo(steps)
	c.starvation(steps)
	c.resources(steps)
	c.muting(steps)
	return errors.Join(c.errs...)
}

func (c *checker) countEntities(steps []Step) {
	if c.m.Entities > 0 {
		return
	}
	seen := map[uint64]bool{}
	for _, s := range steps {
		if !seen[s.ID] {
			seen[s.ID] = true
			c.m.Entities++
			if s.Kind == waitset.Timer {
				c.m.Timers++
			}
		}
	}
}
