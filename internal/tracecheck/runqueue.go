package tracecheck

import "github.com/robotexec/robotexec/waitset"

// queued is an entity in a lane: its ID, the readiness it was queued for
// and the step that queued it.
type queued struct {
	id, n uint64
	at    int
}

// runQueueCheck replays the run queue's lanes (see starvation).
type runQueueCheck struct {
	c                     *checker
	timers, batch, urgent []queued
	streak                int // subscription dequeues in a row not of the one queued longest
	ustreak               int // the priority workers' dequeues in a row not of the urgent one queued longest
}

func (q *runQueueCheck) enqueue(s Step) {
	e := queued{s.ID, s.Seq, s.Index}
	switch {
	case s.Kind == waitset.Timer:
		q.timers = append(q.timers, e)
	case q.c.m.Priority[s.ID] > 0:
		q.urgent = append(q.urgent, e)
	default:
		q.batch = append(q.batch, e)
	}
}

// dequeue checks s, a dequeue, against the lanes and removes its entity;
// it returns the readiness the entity was queued for, if it was queued.
func (q *runQueueCheck) dequeue(s Step) (uint64, bool) {
	c := q.c
	if c.m.PriorityWorkers > 0 {
		if s.Worker >= c.m.Workers {
			return q.dequeueUrgent(s)
		}
		if c.m.Priority[s.ID] > 0 {
			c.failf("step %d: subscription %d (priority %d) dequeued by worker %d, not a priority worker", s.Index, s.ID, c.m.Priority[s.ID], s.Worker)
			return 0, false
		}
	}
	if s.Kind == waitset.Timer {
		if len(q.timers) == 0 || q.timers[0].id != s.ID {
			c.failf("step %d: entity %d dequeued out of FIFO order", s.Index, s.ID)
			return 0, false
		}
		n := q.timers[0].n
		q.timers = q.timers[1:]
		return n, true
	}
	if len(q.timers) > 0 {
		c.failf("step %d: subscription %d dequeued while timer %d was queued", s.Index, s.ID, q.timers[0].id)
	}
	if c.m.Priority[s.ID] == 0 {
		if len(q.batch) == 0 || q.batch[0].id != s.ID {
			c.failf("step %d: entity %d dequeued out of FIFO order", s.Index, s.ID)
			return 0, false
		}
		e := q.batch[0]
		if c.m.PriorityWorkers == 0 {
			q.choice(s, e, true)
		}
		q.batch = q.batch[1:]
		return e.n, true
	}
	for i, e := range q.urgent {
		if e.id == s.ID {
			q.choice(s, e, false)
			q.urgent = append(q.urgent[:i], q.urgent[i+1:]...)
			return e.n, true
		}
	}
	c.failf("step %d: subscription %d dequeued but not queued", s.Index, s.ID)
	return 0, false
}

// choice checks that e, dequeued by s, is the subscription queued
// longest, or else of the highest priority queued, queued first among
// them, and counts the streak of dequeues that were not the one queued
// longest.
func (q *runQueueCheck) choice(s Step, e queued, inBatch bool) {
	c := q.c
	oldest := true
	if !inBatch && len(q.batch) > 0 && q.batch[0].at < e.at {
		oldest = false
	}
	for _, u := range q.urgent {
		if u.at < e.at {
			oldest = false
		}
	}
	if oldest {
		q.streak = 0
		return
	}
	p := c.m.Priority[e.id]
	for _, u := range q.urgent {
		if pu := c.m.Priority[u.id]; pu > p || pu == p && u.at < e.at {
			c.failf("step %d: subscription %d (priority %d) dequeued before %d (priority %d, queued at step %d)",
				s.Index, e.id, p, u.id, pu, u.at)
			break
		}
	}
	q.streak++
	if q.streak > c.m.Streak {
		c.failf("step %d: %d subscription dequeues in a row passed over the one queued longest; bound %d",
			s.Index, q.streak, c.m.Streak)
	}
}

// dequeueUrgent checks s, a dequeue by a priority worker: an urgent
// subscription, of the highest priority queued, queued first among them,
// unless Streak dequeues of the priority workers in a row have passed
// over the urgent one queued longest.
func (q *runQueueCheck) dequeueUrgent(s Step) (uint64, bool) {
	c := q.c
	i := -1
	for j, e := range q.urgent {
		if e.id == s.ID {
			i = j
			break
		}
	}
	if i < 0 {
		c.failf("step %d: entity %d dequeued by priority worker %d, not a queued urgent subscription", s.Index, s.ID, s.Worker)
		return 0, false
	}
	e := q.urgent[i]
	if i == 0 {
		q.ustreak = 0
	} else {
		p := c.m.Priority[e.id]
		for _, u := range q.urgent[:i] {
			if c.m.Priority[u.id] >= p {
				c.failf("step %d: subscription %d (priority %d) dequeued before %d (priority %d, queued at step %d)",
					s.Index, e.id, p, u.id, c.m.Priority[u.id], u.at)
				break
			}
		}
		q.ustreak++
		if q.ustreak > c.m.Streak {
			c.failf("step %d: %d urgent dequeues in a row passed over the one queued longest; bound %d", s.Index, q.ustreak, c.m.Streak)
		}
	}
	q.urgent = append(q.urgent[:i], q.urgent[i+1:]...)
	return e.n, true
}
