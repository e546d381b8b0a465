package timerq

import (
	"cmp"
	"slices"
	"time"
)

// Staging. A worker that busy-waits for a deadline (PollWait before it)
// takes the deadline's timers out of the heap while it waits: at the
// deadline, serving them is their triggers alone, not the heap's rebuild
// too (about 10 µs for 128 of 1,000 timers here), which every timer of the
// group would wait for. Staged timers keep their deadline and stay armed
// for every method (Deadline, Cancel, Reset, Len); one that leaves the
// staged state meanwhile is dropped when the deadline is served. Only a
// queue rung early (SetEarly) on a clock that does not go back stages.

// stageable reports whether q may stage: it rings early, so that a worker
// busy-waits ahead of its deadlines, and its clock does not go back
// (rewound re-arms the heap's timers only). q.mu must be held.
func (q *Queue) stageable() bool {
	return q.lead > 0 && q.onEarly != nil && !q.rewinds
}

// stage takes the timers due at k, the armed deadline's key, out of the
// heap into q.staged, if k is still armed, is the heap's earliest deadline
// and nothing is staged. PollWait calls it before the deadline.
func (q *Queue) stage(k int64) {
	q.mu.Lock()
	defer q.unlock()
	if q.stopped || len(q.staged) > 0 || q.armedAt.IsZero() || q.key(q.armedAt) != k ||
		len(q.heap) == 0 || q.heap[0].due != k {
		return
	}
	q.staged = q.takeDue(k, q.staged, staged)
	q.stagedAt = q.armedAt
}

// unstage appends the staged timers to fired, which takeDue filled, if
// their deadline has passed by key now, marking them due; those that left
// the staged state since are dropped. fired stays in deadline order, by
// ID for equal deadlines. q.mu must be held.
func (q *Queue) unstage(now int64, fired []*Timer) []*Timer {
	if len(q.staged) == 0 || q.key(q.stagedAt) > now {
		return fired
	}
	fromHeap := len(fired)
	for _, t := range q.staged {
		if t.state == staged {
			t.state = due
			fired = append(fired, t)
		}
	}
	q.dropStaged()
	if fromHeap > 0 && len(fired) > fromHeap {
		// Timers armed since on the staged deadline, or deadlines that
		// passed meanwhile: rare, and sorted here.
		slices.SortStableFunc(fired, func(a, b *Timer) int {
			if c := a.next.Compare(b.next); c != 0 {
				return c
			}
			return cmp.Compare(a.ID(), b.ID())
		})
	}
	return fired
}

// dropStaged empties q.staged. q.mu must be held.
func (q *Queue) dropStaged() {
	clear(q.staged)
	q.staged = q.staged[:0]
}

// liveStaged returns the number of staged timers still in the staged
// state. q.mu must be held.
func (q *Queue) liveStaged() int {
	n := 0
	for _, t := range q.staged {
		if t.state == staged {
			n++
		}
	}
	return n
}

// head returns the earliest armed deadline, staged or in the heap, and
// false if none is armed. q.mu must be held.
func (q *Queue) head() (time.Time, bool) {
	var d time.Time
	ok := len(q.heap) > 0
	if ok {
		d = q.timer(q.heap[0]).next
	}
	if len(q.staged) > 0 && (!ok || q.stagedAt.Before(d)) {
		d, ok = q.stagedAt, true
	}
	return d, ok
}

// dueBy returns how many timers fall due by key k, at most limit: the
// heap's (countDue) and the staged ones. q.mu must be held.
func (q *Queue) dueBy(k int64, limit int) int {
	n := q.countDue(k, limit)
	if len(q.staged) > 0 && q.key(q.stagedAt) <= k {
		n = min(n+q.liveStaged(), limit)
	}
	return n
}
