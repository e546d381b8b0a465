package timerq

import "time"

// rewound is the queue's function for a [RewindClock]: the clock went back
// to now. As rcl does on a backward jump of ROS time, a timer whose next
// deadline is more than its period after now (it was called, or started,
// after now) starts again from now, as Reset would start it; the others
// keep their deadlines, which are at most a period away. Without it, a
// timer would wait for the time it had reached before the jump, which a
// clock that started over may take as long again to reach.
//
// A timer that is due is left to its call, which skips it if the clock
// went back before its deadline and re-arms it by the same rule (see
// Call). Nothing falls due here: the clock has not moved past a
// deadline, it went back.
func (q *Queue) rewound(now time.Time) {
	q.mu.Lock()
	defer q.unlock()
	if q.stopped {
		return
	}
	for i := range q.heap {
		if t := q.timer(q.heap[i]); q.rewind(t, now) {
			q.heap[i].due = q.key(t.next)
		}
	}
	for i := len(q.heap)/2 - 1; i >= 0; i-- {
		q.down(i)
	}
	// The alarm is set for a deadline that may now be later than the
	// earliest: set it again.
	q.want(alarmWant{stop: true})
	q.armedAt = time.Time{}
	q.early = false
	q.pollAt.Store(0)
	q.rearm()
}

// rewind applies rewound's rule to t, for a clock that went back to now:
// if t's deadline is more than its period after now, t starts again from
// now. It reports whether t's deadline changed; the caller puts t where
// its deadline goes in the heap. q.mu must be held.
func (q *Queue) rewind(t *Timer, now time.Time) bool {
	if !t.next.After(now.Add(t.period)) {
		return false
	}
	q.uncount(t)
	t.next = q.start(t, now)
	return true
}
