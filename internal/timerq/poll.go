package timerq

import (
	"time"

	"github.com/robotexec/robotexec/internal/tsc"
)

// Poll serves the timers that are due, as the alarm's ring does, if the
// armed deadline has passed, but without the wait set's wake-up: the
// caller is to take them (an executor's worker that finds more work than
// it takes wakes another). An executor's workers call it between
// callbacks: when every processor is busy, the thread that waits for the
// alarm may get one milliseconds late (the kernel's time slices, a virtual
// machine's), while a worker that finishes a callback is already running.
//
// It costs an atomic load when no timer is armed, and a read of the CPU's
// time-stamp counter when one is. It does nothing on a queue whose clock
// is not System or Precise (or a clock that embeds one), or where the
// counter is not trusted (see internal/tsc): there, where a reading of the
// clock would cost a callback's dispatch again, only the alarm and
// PollWait serve the timers.
//
// It reports whether it served anything: the caller is to take it, or to
// wake a worker that will.
func (x Fast) Poll() bool {
	q := x.q
	switch at := q.pollAt.Load(); {
	case at == 0:
		return false
	case q.nsPerTick != 0:
		return q.poll(at, tsc.Read())
	case at == 1:
		// Served quietly: the alarm is left for the first call, which
		// is always past (see serve).
		return q.poll(at, at)
	}
	return false
}

// PollWait is Poll for a worker that busy-waits for a deadline (see
// SetEarly), where a reading's cost does not matter: where the counter is
// not trusted, it reads the queue's clock (Go's monotonic clock, about 40
// ns a reading in a virtual machine on kvm-clock) and serves the timers
// that are due by it.
func (x Fast) PollWait() bool {
	q := x.q
	at := q.pollAt.Load()
	if at == 0 {
		return false
	}
	now := q.now()
	if now < at {
		// Waiting for the deadline: take its timers out of the heap
		// meanwhile, once (see stage).
		if k := q.stageKey.Load(); k != 0 && q.stageKey.CompareAndSwap(k, 0) {
			q.stage(k)
		}
		return false
	}
	return q.poll(at, now)
}

// poll serves the timers that are due if now, a reading of the queue's
// poll clock (see now), has reached at, the armed deadline's.
func (q *Queue) poll(at, now int64) bool {
	// One of the workers that find the deadline passed rings.
	if now >= at && q.pollAt.CompareAndSwap(at, 0) {
		return q.serve(true) > 0
	}
	return false
}

// now reads the clock that the queue is polled on: the counter where it
// is trusted, else the nanoseconds since base on the queue's clock.
func (q *Queue) now() int64 {
	if q.nsPerTick != 0 {
		return tsc.Read()
	}
	return int64(q.clock.Now().Sub(q.base))
}

// Now returns a reading of the clock that PollWait compares the armed
// deadline with: the time-stamp counter where it is trusted, else the
// nanoseconds since the queue was made on its clock. Ticks converts a
// duration to its units. A worker that busy-waits bounds its wait with
// them.
func (x Fast) Now() int64 { return x.q.now() }

// Armed returns the deadline armed for Poll, a reading of Now's clock:
// 0 when none is armed, 1 when the last was served and the next is not
// armed yet.
func (x Fast) Armed() int64 { return x.q.pollAt.Load() }

// Ticks returns d in the units of Now.
func (x Fast) Ticks(d time.Duration) int64 {
	if x.q.nsPerTick != 0 {
		return int64(float64(d) / x.q.nsPerTick)
	}
	return int64(d)
}

// Due reports whether Poll, called at time-stamp counter reading ticks
// (tsc.Read), would find a deadline passed: a timer is due that the alarm
// has not served yet. It costs an atomic load, and is false on a queue
// that is not polled on the counter.
func (x Fast) Due(ticks int64) bool {
	at := x.q.pollAt.Load()
	return at != 0 && x.q.nsPerTick != 0 && ticks >= at
}

// Pollable reports whether PollWait can serve the queue: its clock is
// System or Precise (or embeds one). Poll serves it too where the
// time-stamp counter is trusted.
func (x Fast) Pollable() bool { return x.q.nsPerTick != 0 || x.q.onClock }
