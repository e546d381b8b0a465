// Package timerq provides the periodic and one-shot timers of an executor,
// the clocks they run on, and the deadline queue that triggers them.
// Package timers gives programs its Timer, Event and clocks under their
// public names.
//
// A [Timer] is an entity of the wait set (package waitset). A [Queue] keeps
// every timer of an executor in one deadline heap, armed on a single
// [Alarm] of its [Clock]; when a deadline passes, the queue triggers the timer
// into the wait set. It never runs callbacks itself.
//
// Deadlines are drift-free: a periodic timer's next deadline is its previous
// deadline plus the period, never the time the callback ran plus the period.
// The executor calls [Call] when the callback starts; as in rcl, a call
// that comes more than a period late skips the deadlines that already passed
// and counts them as missed, so a late timer never fires a queued burst. A
// timer is re-armed when its callback starts, so it is never both due and
// waiting for its next deadline.
//
// Two clocks come with the package: [System], the wall clock, and [Sim], a
// simulated clock that tests step by hand. A Sim can also be set back
// ([Sim.Rewind]), as the clock topic is when a playback starts over; a
// queue on it then re-arms its timers on the new time, as rcl does on a
// backward jump of ROS time (see [RewindClock]).
//
// An executor's workers also serve the queue themselves, between callbacks,
// through the queue's [Fast] path, package executor's own.
//
// # Concurrency
//
// Every method of Queue and Timer is safe for concurrent use. Sim is safe
// for concurrent use; its alarms run on the goroutine that advances it.
package timerq
