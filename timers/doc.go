// Package timers holds the executor's timers: the [Timer] that a periodic
// or one-shot registration returns, the [Event] a timer callback
// receives, the [Clock]s an executor may run on ([System], [Precise], and
// [Sim] for tests and simulated time), and the [Queue] of deadlines that
// triggers timers into a wait set, for a program with a scheduling loop
// of its own (package waitset has an example).
//
// Deadlines are drift-free: a periodic timer's next deadline is its
// previous deadline plus the period, never the time the callback ran plus
// the period. As in rcl, a call that comes more than a period late skips
// the deadlines that already passed and counts them as missed
// ([Event.Missed], [Timer.Missed]), so a late timer never fires a queued
// burst.
//
// Every type is safe for concurrent use.
package timers
