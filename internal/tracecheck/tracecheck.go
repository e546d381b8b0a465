// Package tracecheck records the scheduling steps of an executor and checks
// the properties of the seeds on the recorded trace: the lifecycle of every
// entity (waiting → queued → running → waiting, never two at once; a
// subscription's run serves at most Model.Batch messages, on one worker;
// a worker runs one entity at a time),
// exclusion within mutually exclusive groups, timers first within a batch,
// FIFO per subscription with every accepted message run or counted as
// dropped, the starvation bound of package executor, counted in dequeues so
// that it holds on any schedule, and seed 002's invariants for resources
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

	"github.com/robotexec/robotexec/waitset"
)

// Step is one recorded event with its place in the trace.
type Step struct {
	waitset.Event
	Index int
	ID    uint64
	Kind  waitset.Kind
}

// Recorder is a waitset.Observer that keeps every event in the order the
// calls were made. Calls are serialized, so the order respects
// happens-before between steps. The zero Recorder is ready to use.
type Recorder struct {
	mu    sync.Mutex
	steps []Step
}

// Observe records ev.
func (r *Recorder) Observe(ev waitset.Event) {
	r.mu.Lock()
	r.steps = append(r.steps, Step{Event: ev, Index: len(r.steps), ID: ev.Entity.ID(), Kind: ev.Entity.Kind()})
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

// lifecycle checks that each entity's scheduling steps follow
// (Enqueue Dequeue Start Finish)*: never queued twice, never running twice
// at once, and, once drained, back in waiting. Ready steps are observed just
// after the fact and may trail the steps they enable; they are matched by
// count: an entity is enqueued once per time it became ready.
func (c *checker) lifecycle(steps []Step) {
	next := map[uint64]waitset.Op{}
	readies := map[uint64]int{}
	enqueues := map[uint64]uint64{}
	type run struct {
		worker, messages int
		empty            bool // a subscription's run that found no message
	}
	runs := map[uint64]run{}    // entity → its current run
	running := map[int]uint64{} // worker → the entity it runs
	for _, s := range steps {
		switch s.Op {
		case waitset.Accept, waitset.Drop, waitset.Request, waitset.Acquire, waitset.Release, waitset.Mute, waitset.Unmute, waitset.Echo:
			continue
		case waitset.Ready:
			readies[s.ID]++
			continue
		case waitset.Enqueue:
			enqueues[s.ID]++
			if s.Seq != enqueues[s.ID] {
				c.failf("step %d: entity %d enqueued for readiness %d, want %d", s.Index, s.ID, s.Seq, enqueues[s.ID])
			}
		case waitset.Start:
			if other, busy := running[s.Worker]; busy {
				c.failf("step %d: entity %d starts on worker %d, which runs entity %d", s.Index, s.ID, s.Worker, other)
			}
			running[s.Worker] = s.ID
			runs[s.ID] = run{worker: s.Worker, messages: 1, empty: s.Kind == waitset.Subscription && s.Seq == 0}
		case waitset.Next:
			// A batch: the run goes on with the next message, on the
			// same worker, up to the batch's bound.
			r, running := runs[s.ID]
			switch {
			case s.Kind != waitset.Subscription:
				c.failf("step %d: entity %d (%v): next in a run of a timer", s.Index, s.ID, s.Kind)
			case !running || next[s.ID] != waitset.Finish:
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
			runs[s.ID] = r
			continue
		case waitset.Finish:
			if r, ok := runs[s.ID]; ok && r.worker != s.Worker {
				c.failf("step %d: entity %d finishes on worker %d a run started on worker %d", s.Index, s.ID, s.Worker, r.worker)
			}
			if running[s.Worker] == s.ID {
				delete(running, s.Worker)
			}
			delete(runs, s.ID)
		}
		want, ok := next[s.ID]
		if !ok {
			want = waitset.Enqueue
		}
		if s.Op != want {
			c.failf("step %d: entity %d (%v): %v, want %v", s.Index, s.ID, s.Kind, s.Op, want)
		}
		next[s.ID] = after(s.Op)
	}
	if c.m.Drained {
		for id, want := range next {
			if want != waitset.Enqueue {
				c.failf("entity %d did not drain: next step would be %v", id, want)
			}
		}
		for id, n := range readies {
			if enqueues[id] != uint64(n) {
				c.failf("entity %d became ready %d times and was enqueued %d times", id, n, enqueues[id])
			}
		}
	}
}

func after(op waitset.Op) waitset.Op {
	switch op {
	case waitset.Enqueue:
		return waitset.Dequeue
	case waitset.Dequeue:
		return waitset.Start
	case waitset.Start:
		return waitset.Finish
	}
	return waitset.Enqueue
}

// groups checks that no two entities of one mutually exclusive group run at
// once.
func (c *checker) groups(steps []Step) {
	if len(c.m.Group) == 0 {
		return
	}
	running := map[string]uint64{} // group → entity running in it
	for _, s := range steps {
		g, ok := c.m.Group[s.ID]
		if !ok {
			continue
		}
		switch s.Op {
		case waitset.Start:
			if other, busy := running[g]; busy {
				c.failf("step %d: entity %d starts while entity %d of group %q runs", s.Index, s.ID, other, g)
			}
			running[g] = s.ID
		case waitset.Finish:
			if running[g] == s.ID {
				delete(running, g)
			}
		}
	}
}

// timersFirst checks that within each batch no timer follows a
// subscription.
func (c *checker) timersFirst(steps []Step) {
	sawSub := map[uint64]uint64{} // batch → a subscription in it
	for _, s := range steps {
		if s.Op != waitset.Enqueue {
			continue
		}
		if s.Kind == waitset.Subscription {
			sawSub[s.Batch] = s.ID
		} else if sub, ok := sawSub[s.Batch]; ok {
			c.failf("step %d: timer %d enqueued after subscription %d in batch %d", s.Index, s.ID, sub, s.Batch)
		}
	}
}

// fifo checks that each subscription runs its messages in the order it
// accepted them, each once, and, once drained, that every accepted message
// was run or dropped by its policy.
func (c *checker) fifo(steps []Step) {
	type subState struct {
		accepted, last uint64
		done           map[uint64]string
	}
	subs := map[uint64]*subState{}
	get := func(id uint64) *subState {
		st := subs[id]
		if st == nil {
			st = &subState{done: map[uint64]string{}}
			subs[id] = st
		}
		return st
	}
	for _, s := range steps {
		if s.Kind != waitset.Subscription {
			continue
		}
		switch s.Op {
		case waitset.Accept:
			st := get(s.ID)
			if s.Seq != st.accepted+1 {
				c.failf("step %d: subscription %d accepted message %d after %d", s.Index, s.ID, s.Seq, st.accepted)
			}
			st.accepted = s.Seq
		case waitset.Start, waitset.Next:
			if s.Seq == 0 {
				continue
			}
			st := get(s.ID)
			if s.Seq <= st.last {
				c.failf("step %d: subscription %d runs message %d after message %d", s.Index, s.ID, s.Seq, st.last)
			}
			if s.Seq > st.accepted {
				c.failf("step %d: subscription %d runs message %d before accepting it", s.Index, s.ID, s.Seq)
			}
			st.last = s.Seq
			if prev, dup := st.done[s.Seq]; dup {
				c.failf("step %d: subscription %d message %d run after it was %s", s.Index, s.ID, s.Seq, prev)
			}
			st.done[s.Seq] = "run"
		case waitset.Drop:
			if s.Seq == 0 {
				continue
			}
			st := get(s.ID)
			if prev, dup := st.done[s.Seq]; dup {
				c.failf("step %d: subscription %d message %d dropped after it was %s", s.Index, s.ID, s.Seq, prev)
			}
			st.done[s.Seq] = "dropped"
		}
	}
	if !c.m.Drained {
		return
	}
	for id, st := range subs {
		for seq := uint64(1); seq <= st.accepted; seq++ {
			if _, ok := st.done[seq]; !ok {
				c.failf("subscription %d: accepted message %d was neither run nor dropped", id, seq)
			}
		}
	}
}

// starvation checks the bound of package executor and the run queue
// discipline it rests on. The run queue has two lanes, timers ahead of
// subscriptions:
//   - each lane is FIFO, and a worker takes a subscription only when no
//     timer is queued;
//   - a batch with subscriptions is formed only when the run queue is
//     empty; due timers are taken at every dequeue, in batches of their own;
//   - between an entity becoming ready and its dequeue, at most T-1 other
//     timers are dequeued for a timer, and at most E-1 subscriptions (and
//     any number of timers) for a subscription.
//
// Enqueue and Dequeue are observed under the run queue's lock, and Ready
// just after the entity became ready, so the counts are exact or smaller
// than the truth: the bound needs no slack.
func (c *checker) starvation(steps []Step) {
	type key struct{ id, n uint64 }
	type queued struct{ id, n uint64 }
	var lanes [2][]queued // timers, subscriptions
	lane := func(k waitset.Kind) int {
		if k == waitset.Timer {
			return 0
		}
		return 1
	}
	batch := uint64(0)
	var timersAtBatch int    // timers queued before the current batch
	subsInBatch := false     // the current batch has a subscription
	readyAt := map[key]int{} // (entity, readiness) → dequeues of its lane when it became ready
	var dequeues [2]int
	for _, s := range steps {
		switch s.Op {
		case waitset.Ready:
			readyAt[key{s.ID, s.Seq}] = dequeues[lane(s.Kind)]
		case waitset.Enqueue:
			if s.Batch != batch {
				batch = s.Batch
				timersAtBatch = len(lanes[0])
				subsInBatch = false
			}
			l := lane(s.Kind)
			if l == 1 && !subsInBatch {
				subsInBatch = true
				if timersAtBatch+len(lanes[1]) != 0 {
					c.failf("step %d: batch %d with subscriptions formed while %d entities were queued",
						s.Index, s.Batch, timersAtBatch+len(lanes[1]))
				}
			}
			lanes[l] = append(lanes[l], queued{s.ID, s.Seq})
		case waitset.Dequeue:
			l := lane(s.Kind)
			if l == 1 && len(lanes[0]) > 0 {
				c.failf("step %d: subscription %d dequeued while timer %d was queued", s.Index, s.ID, lanes[0][0].id)
			}
			q := lanes[l]
			if len(q) == 0 || q[0].id != s.ID {
				c.failf("step %d: entity %d dequeued out of FIFO order", s.Index, s.ID)
				dequeues[l]++
				continue
			}
			k := key{s.ID, q[0].n}
			lanes[l] = q[1:]
			if at, ok := readyAt[k]; ok {
				others := dequeues[l] - at
				bound, what := c.m.Entities-1, "subscriptions"
				if l == 0 {
					bound, what = c.m.Timers-1, "timers"
				}
				if others > bound {
					c.failf("step %d: %v %d dequeued after %d other %s since it became ready; bound %d",
						s.Index, s.Kind, s.ID, others, what, bound)
				}
				delete(readyAt, k)
			}
			dequeues[l]++
		}
	}
}

// resources checks seed 002's invariants on the resource steps:
//   - UniqueAcquisition: a resource is held by one request at a time;
//   - FIFO per resource: requests acquire a resource in the order they
//     were queued on it;
//   - ordered acquisition: a run queues its requests in ascending resource
//     order, each after acquiring the one before;
//   - RunningImplication: a running entity holds every resource it
//     requested for the run, from its start to its finish, and releases
//     them only then;
//   - once drained, every request was acquired and released.
func (c *checker) resources(steps []Step) {
	holder := map[uint64]uint64{}      // resource → entity holding it
	queued := map[uint64][]uint64{}    // resource → entities queued on it, in order
	held := map[uint64][]uint64{}      // entity → resources held for its current run
	requested := map[uint64][]uint64{} // entity → resources requested for its current run
	running := map[uint64]bool{}
	for _, s := range steps {
		switch s.Op {
		case waitset.Request, waitset.Acquire, waitset.Release:
			if s.Resource == 0 || s.Overloaded != 0 {
				c.failf("step %d: %s of entity %d names resource %d and overloaded subscription %d", s.Index, s.Op, s.ID, s.Resource, s.Overloaded)
			}
		}
		switch s.Op {
		case waitset.Request:
			r := s.Resource
			if rs := requested[s.ID]; len(rs) > 0 {
				last := rs[len(rs)-1]
				if r <= last {
					c.failf("step %d: entity %d requests resource %d after %d: not ascending", s.Index, s.ID, r, last)
				}
				if hs := held[s.ID]; len(hs) == 0 || hs[len(hs)-1] != last {
					c.failf("step %d: entity %d requests resource %d before holding %d", s.Index, s.ID, r, last)
				}
			}
			requested[s.ID] = append(requested[s.ID], r)
			queued[r] = append(queued[r], s.ID)
		case waitset.Acquire:
			r := s.Resource
			if h, busy := holder[r]; busy {
				c.failf("step %d: entity %d acquires resource %d held by entity %d", s.Index, s.ID, r, h)
			}
			if q := queued[r]; len(q) == 0 || q[0] != s.ID {
				c.failf("step %d: entity %d acquires resource %d out of FIFO order (queue %v)", s.Index, s.ID, r, first(q))
			} else {
				queued[r] = q[1:]
			}
			holder[r] = s.ID
			held[s.ID] = append(held[s.ID], r)
		case waitset.Start:
			running[s.ID] = true
			if len(requested[s.ID]) != len(held[s.ID]) {
				c.failf("step %d: entity %d starts holding %v of its resources %v", s.Index, s.ID, held[s.ID], requested[s.ID])
			}
		case waitset.Release:
			r := s.Resource
			if holder[r] != s.ID {
				c.failf("step %d: entity %d releases resource %d it does not hold", s.Index, s.ID, r)
			}
			if !running[s.ID] {
				c.failf("step %d: entity %d releases resource %d while not running", s.Index, s.ID, r)
			}
			delete(holder, r)
			held[s.ID] = remove(held[s.ID], r)
			requested[s.ID] = remove(requested[s.ID], r)
		case waitset.Finish:
			if len(held[s.ID]) > 0 {
				c.failf("step %d: entity %d finishes still holding resources %v", s.Index, s.ID, held[s.ID])
			}
			delete(running, s.ID)
		}
	}
	if c.m.Drained {
		for r, q := range queued {
			if len(q) > 0 {
				c.failf("resource %d: requests of entities %v never acquired it", r, first(q))
			}
		}
		for r, x := range holder {
			c.failf("resource %d still held by entity %d", r, x)
		}
	}
}

// muting checks that a muted entity is not scheduled until unmuted, that
// its mute and its unmute name the same overloaded subscription, and, once
// drained, that every mute ended.
func (c *checker) muting(steps []Step) {
	type mute struct {
		at int    // the step of the mute
		by uint64 // the overloaded subscription
	}
	muted := map[uint64]mute{} // entity → its mute
	for _, s := range steps {
		switch s.Op {
		case waitset.Mute:
			if m, ok := muted[s.ID]; ok {
				c.failf("step %d: entity %d muted again (muted at step %d)", s.Index, s.ID, m.at)
			}
			if s.Overloaded == 0 || s.Resource != 0 {
				c.failf("step %d: mute of entity %d names overloaded subscription %d and resource %d", s.Index, s.ID, s.Overloaded, s.Resource)
			}
			muted[s.ID] = mute{s.Index, s.Overloaded}
		case waitset.Unmute:
			m, ok := muted[s.ID]
			if !ok {
				c.failf("step %d: entity %d unmuted while not muted", s.Index, s.ID)
			} else if s.Overloaded != m.by {
				c.failf("step %d: entity %d unmuted by subscription %d, muted by %d", s.Index, s.ID, s.Overloaded, m.by)
			}
			delete(muted, s.ID)
		case waitset.Enqueue:
			if m, ok := muted[s.ID]; ok {
				c.failf("step %d: entity %d scheduled while muted (since step %d)", s.Index, s.ID, m.at)
			}
		}
	}
	if c.m.Drained {
		for id, m := range muted {
			c.failf("entity %d muted at step %d was never unmuted", id, m.at)
		}
	}
}

func remove(list []uint64, v uint64) []uint64 {
	for i, x := range list {
		if x == v {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

func first(q []uint64) []uint64 {
	if len(q) > 5 {
		return q[:5]
	}
	return q
}
