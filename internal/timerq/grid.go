package timerq

import (
	"math"
	"time"
)

// start returns the first deadline of timer t started at now: now plus
// its period, rounded up to the clock's grid for a periodic timer, to its
// step for a one-shot timer, if it has them. Where the clock limits the
// timers that start on one deadline (Precise: PreciseGroup), a periodic
// timer whose grid point has as many already starts a step later, or the
// next step, and so on; it is counted on its deadline until it is reset,
// canceled or detached (uncount). q.mu must be held.
func (q *Queue) start(t *Timer, now time.Time) time.Time {
	if t.oneShot {
		d, _ := q.round(now.Add(t.period), q.step)
		return d
	}
	d, ok := q.round(now.Add(t.period), q.grid)
	if !ok || q.group <= 0 || q.step <= 0 {
		return d
	}
	if q.starts == nil {
		q.starts, q.pruneAt = make(map[int64]int), 64
	}
	if len(q.starts) >= q.pruneAt {
		// No timer starts on a deadline that has passed: forget them.
		past := q.key(now)
		for k := range q.starts {
			if k < past {
				delete(q.starts, k)
			}
		}
		q.pruneAt = max(64, 2*len(q.starts))
	}
	k := q.key(d)
	for q.starts[k] >= q.group && k <= math.MaxInt64-int64(q.step) {
		d = d.Add(q.step)
		k += int64(q.step)
	}
	q.starts[k]++
	t.counted = k
	return d
}

// uncount takes t off the count of the deadline it started on, if it is
// counted on one: it will not fall due there. q.mu must be held.
func (q *Queue) uncount(t *Timer) {
	if t.counted == 0 {
		return
	}
	if n, ok := q.starts[t.counted]; ok {
		if n <= 1 {
			delete(q.starts, t.counted)
		} else {
			q.starts[t.counted] = n - 1
		}
	}
	t.counted = 0
}

// round returns t rounded up to a multiple of g (none if g is 0), and
// whether it did: a time too close to the largest Duration from the
// queue's base (a delay meaning "never") is left as it is.
//
// The rounding is done on the queue's base: the deadline is the base plus
// a duration, so that timers rounded to the same point of the grid have
// the same deadline to the nanosecond. (Rounding each time's own wall
// reading would not: the wall clock drifts against the monotonic one,
// which orders the heap, by a few nanoseconds between two readings while
// NTP slews it, and the timers would fall due apart.)
func (q *Queue) round(t time.Time, g time.Duration) (time.Time, bool) {
	if g <= 0 {
		return t, false
	}
	// The offset from the base is rounded so that base's wall reading plus
	// it is a multiple of the grid; working on the offset, not on the sum,
	// nothing overflows.
	d := int64(t.Sub(q.base))
	if d > math.MaxInt64-int64(g) {
		return t, false
	}
	r := (q.base.UnixNano()%int64(g) + d%int64(g)) % int64(g)
	if r < 0 {
		r += int64(g)
	}
	if r != 0 {
		d += int64(g) - r
	}
	return q.base.Add(time.Duration(d)), true
}
