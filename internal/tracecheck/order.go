package tracecheck

import (
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

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
		case trace.Start:
			if other, busy := running[g]; busy {
				c.failf("step %d: entity %d starts while entity %d of group %q runs", s.Index, s.ID, other, g)
			}
			running[g] = s.ID
		case trace.Finish:
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
		if s.Op != trace.Enqueue {
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
		case trace.Accept:
			st := get(s.ID)
			if s.Seq != st.accepted+1 {
				c.failf("step %d: subscription %d accepted message %d after %d", s.Index, s.ID, s.Seq, st.accepted)
			}
			st.accepted = s.Seq
		case trace.Start, trace.Next:
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
		case trace.Drop:
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
		case trace.Ready:
			readyAt[key{s.ID, s.Seq}] = dequeues[lane(s.Kind)]
		case trace.Enqueue:
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
		case trace.Dequeue:
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
