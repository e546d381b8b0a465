package tracecheck

import (
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// lifecycle checks that each entity's scheduling steps follow
// (Enqueue Dequeue Start Finish)*: never queued twice, never running twice
// at once, and, once drained, back in waiting. Ready steps are observed just
// after the fact and may trail the steps they enable; they are matched by
// count: an entity is enqueued once per time it became ready.
func (c *checker) lifecycle(steps []Step) {
	l := &lifecycleCheck{c: c, next: map[uint64]trace.Op{}, readies: map[uint64]int{}, enqueues: map[uint64]uint64{},
		runs: map[uint64]lifecycleRun{}, running: map[int]uint64{}}
	for _, s := range steps {
		l.step(s)
	}
	if c.m.Drained {
		l.drained()
	}
}

// lifecycleCheck is lifecycle's state over the steps seen so far.
type lifecycleCheck struct {
	c        *checker
	next     map[uint64]trace.Op // entity → the step it must take next
	readies  map[uint64]int      // entity → Ready steps
	enqueues map[uint64]uint64   // entity → Enqueue steps
	runs     map[uint64]lifecycleRun
	running  map[int]uint64 // worker → the entity it runs
}

// lifecycleRun is an entity's current run.
type lifecycleRun struct {
	worker, messages int
	empty            bool // a subscription's run that found no message
}

// step checks one step.
func (l *lifecycleCheck) step(s Step) {
	c := l.c
	switch s.Op {
	case trace.Accept, trace.Drop, trace.Request, trace.Acquire, trace.Release, trace.Mute, trace.Unmute:
		return
	case trace.Ready:
		l.readies[s.ID]++
		return
	case trace.Next:
		l.batchNext(s)
		return
	case trace.Enqueue:
		l.enqueues[s.ID]++
		if s.Seq != l.enqueues[s.ID] {
			c.failf("step %d: entity %d enqueued for readiness %d, want %d", s.Index, s.ID, s.Seq, l.enqueues[s.ID])
		}
	case trace.Start:
		if other, busy := l.running[s.Worker]; busy {
			c.failf("step %d: entity %d starts on worker %d, which runs entity %d", s.Index, s.ID, s.Worker, other)
		}
		l.running[s.Worker] = s.ID
		l.runs[s.ID] = lifecycleRun{worker: s.Worker, messages: 1, empty: s.Kind == waitset.Subscription && s.Seq == 0}
	case trace.Finish:
		if r, ok := l.runs[s.ID]; ok && r.worker != s.Worker {
			c.failf("step %d: entity %d finishes on worker %d a run started on worker %d", s.Index, s.ID, s.Worker, r.worker)
		}
		if l.running[s.Worker] == s.ID {
			delete(l.running, s.Worker)
		}
		delete(l.runs, s.ID)
	}
	want, ok := l.next[s.ID]
	if !ok {
		want = trace.Enqueue
	}
	if s.Op != want {
		c.failf("step %d: entity %d (%v): %v, want %v", s.Index, s.ID, s.Kind, s.Op, want)
	}
	l.next[s.ID] = after(s.Op)
}

// batchNext checks a Next step: a batch's run goes on with the next
// message, on the same worker, up to the batch's bound.
func (l *lifecycleCheck) batchNext(s Step) {
	c := l.c
	r, running := l.runs[s.ID]
	switch {
	case s.Kind != waitset.Subscription:
		c.failf("step %d: entity %d (%v): next in a run of a timer", s.Index, s.ID, s.Kind)
	case !running || l.next[s.ID] != trace.Finish:
		c.failf("step %d: entity %d: next outside a run", s.Index, s.ID)
	case r.worker != s.Worker:
		c.failf("step %d: entity %d: next on worker %d in a run on worker %d", s.Index, s.ID, s.Worker, r.worker)
	case r.messages >= c.m.Batch:
		c.failf("step %d: entity %d: run serves more than %d messages", s.Index, s.ID, c.m.Batch)
	case r.empty:
		c.failf("step %d: entity %d: next in a run that found its queue empty", s.Index, s.ID)
	case s.Seq == 0:
		c.failf("step %d: entity %d: next without a message", s.Index, s.ID)
	}
	r.messages++
	l.runs[s.ID] = r
}

// drained checks that every entity ended waiting, enqueued once per time
// it became ready.
func (l *lifecycleCheck) drained() {
	for id, want := range l.next {
		if want != trace.Enqueue {
			l.c.failf("entity %d did not drain: next step would be %v", id, want)
		}
	}
	for id, n := range l.readies {
		if l.enqueues[id] != uint64(n) {
			l.c.failf("entity %d became ready %d times and was enqueued %d times", id, n, l.enqueues[id])
		}
	}
}

func after(op trace.Op) trace.Op {
	switch op {
	case trace.Enqueue:
		return trace.Dequeue
	case trace.Dequeue:
		return trace.Start
	case trace.Start:
		return trace.Finish
	}
	return trace.Enqueue
}
