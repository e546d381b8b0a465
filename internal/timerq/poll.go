package timerq

import "github.com/robotexec/robotexec/internal/tsc"

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
// counter is not trusted (see internal/tsc): there, only the alarm serves
// the timers.
//
// It reports whether it served anything: the caller is to take it, or to
// wake a worker that will.
func (x Fast) Poll() bool {
	if at := x.q.pollAt.Load(); at != 0 {
		return x.q.poll(at)
	}
	return false
}

func (q *Queue) poll(at int64) bool {
	// One of the workers that find the deadline passed rings.
	if tsc.Read() >= at && q.pollAt.CompareAndSwap(at, 0) {
		return q.serve(true) > 0
	}
	return false
}

// Due reports whether Poll, called at time-stamp counter reading ticks
// (tsc.Read), would find a deadline passed: a timer is due that the alarm
// has not served yet. It costs an atomic load, and is false on a queue
// that is not Pollable.
func (x Fast) Due(ticks int64) bool {
	at := x.q.pollAt.Load()
	return at != 0 && ticks >= at
}

// Pollable reports whether Poll can serve the queue: its clock is System
// or Precise (or embeds one) and the time-stamp counter is trusted.
func (x Fast) Pollable() bool { return x.q.nsPerTick != 0 }
