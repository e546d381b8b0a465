package tracecheck

import (
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// starvation checks the bound of package executor and the run queue
// discipline it rests on. The run queue has three lanes, timers ahead of
// subscriptions, and among those the urgent ones (Model.Priority) ahead of
// the batch:
//   - the timers' and the batch's lanes are FIFO, and a worker takes a
//     subscription only when no timer is queued;
//   - a batch with subscriptions of priority 0 is formed only when the
//     timers' and the batch's lanes are empty; due timers and urgent
//     subscriptions are taken at every dequeue, in batches of their own;
//   - a subscription dequeued is the one queued longest, or one of the
//     highest priority queued, queued first among its equals; and at most
//     Model.Streak dequeues in a row are not the one queued longest;
//   - between an entity becoming ready and its dequeue, at most T-1 other
//     timers are dequeued for a timer, and for a subscription at most E-1
//     subscriptions (any number of timers), or (2E-1)(Streak+1) with
//     priorities: the batch before its own drains within (E-1)(Streak+1)
//     dequeues, and it has at most E-1 subscriptions queued before it.
//
// Enqueue and Dequeue are observed under the run queue's lock, and Ready
// just after the entity became ready, so the counts are exact or smaller
// than the truth: the bound needs no slack.
func (c *checker) starvation(steps []Step) {
	type key struct{ id, n uint64 }
	st := &runQueueCheck{c: c}
	batch := uint64(0)
	var timersAtBatch int    // timers queued before the current batch
	subsInBatch := false     // the current batch has a subscription of priority 0
	readyAt := map[key]int{} // (entity, readiness) → dequeues of its lane when it became ready
	var dequeues [3]int      // of timers, of subscriptions, of the priority workers' subscriptions
	lane := func(s Step) int {
		switch {
		case s.Kind == waitset.Timer:
			return 0
		case c.m.PriorityWorkers > 0 && c.m.Priority[s.ID] > 0:
			return 2
		}
		return 1
	}
	for _, s := range steps {
		switch s.Op {
		case trace.Ready:
			readyAt[key{s.ID, s.Seq}] = dequeues[lane(s)]
		case trace.Enqueue:
			if s.Batch != batch {
				batch = s.Batch
				timersAtBatch = len(st.timers)
				subsInBatch = false
			}
			if s.Kind == waitset.Subscription && c.m.Priority[s.ID] == 0 && !subsInBatch {
				subsInBatch = true
				if timersAtBatch+len(st.batch) != 0 {
					c.failf("step %d: batch %d with subscriptions formed while %d entities were queued",
						s.Index, s.Batch, timersAtBatch+len(st.batch))
				}
			}
			st.enqueue(s)
		case trace.Dequeue:
			l := lane(s)
			n, ok := st.dequeue(s)
			if ok {
				if at, ok := readyAt[key{s.ID, n}]; ok {
					c.checkWait(s, dequeues[l]-at)
					delete(readyAt, key{s.ID, n})
				}
			}
			dequeues[l]++
		}
	}
}

// checkWait checks the dequeues of others (of its lane) that s's entity
// waited for since it became ready.
func (c *checker) checkWait(s Step, others int) {
	bound, what := c.m.Entities-1, "subscriptions"
	switch {
	case s.Kind == waitset.Timer:
		bound, what = c.m.Timers-1, "timers"
	case c.m.PriorityWorkers > 0 && c.m.Priority[s.ID] == 0:
		// The others' lane: no urgent subscription passes over it.
	case len(c.m.Priority) > 0:
		bound = (2*c.m.Entities - 1) * (c.m.Streak + 1)
	}
	if others > bound {
		c.failf("step %d: %v %d dequeued after %d other %s since it became ready; bound %d",
			s.Index, s.Kind, s.ID, others, what, bound)
	}
}
