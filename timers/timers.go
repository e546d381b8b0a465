// Package timers holds what a program needs of the executor's timers: the
// [Timer] handle that Owner.NewTimer and Owner.NewOneShot return, the
// [Event] a timer callback receives, and the clocks an executor may run
// on ([System], [Precise], and [Sim] for tests and simulated time).
//
// Deadlines are drift-free: a periodic timer's next deadline is its
// previous deadline plus the period, never the time the callback ran plus
// the period. As in rcl, a call that comes more than a period late skips
// the deadlines that already passed and counts them as missed
// ([Event.Missed], [Timer.Missed]), so a late timer never fires a queued
// burst.
//
// The deadline queue that triggers the timers is the executor's own
// (internal/timerq in the repository); the types here are its.
package timers

import (
	"time"

	"github.com/robotexec/robotexec/internal/timerq"
)

// Clock is what timers run on: Now, and alarms that call a function once
// the clock reaches the time they are set to. Executor options take one;
// nil means System.
type Clock = timerq.Clock

// Alarm calls a function once its clock reaches the time it is set to
// (Set; Stop unsets it). A Clock makes them; the executor uses one per
// executor, and closes it when it stops if it is an io.Closer.
type Alarm = timerq.Alarm

// Event is what a timer callback receives: Expected, the deadline the call
// serves; Actual, when it started; and Missed, the deadlines after
// Expected that had also passed and were skipped. Late returns Actual
// minus Expected.
type Event = timerq.Event

// Timer is a periodic or one-shot timer, as Owner.NewTimer and
// Owner.NewOneShot return it. Its methods are safe for concurrent use:
// Cancel stops it (Canceled reports it), Reset arms it again from now (a
// one-shot, delay from now), ResetAt arms it for a deadline; Period,
// OneShot, Deadline, Calls and Missed describe it. ID is the callback's
// ID (executor.Run.ID).
type Timer = timerq.Timer

// Sim is a simulated clock: time stands still until it is advanced (by a
// test, or by the clock topic with use_sim_time), and alarms fire on the
// advancing goroutine, in deadline order, each at its own time (Advance,
// AdvanceTo). Rewind sets it back, as the clock topic does when a
// playback starts over; the executor's timers then re-arm on the new
// time. It is safe for concurrent use.
type Sim = timerq.Sim

// NewSim returns a simulated clock that reads start.
func NewSim(start time.Time) *Sim { return timerq.NewSim(start) }

// System is the wall clock: time.Now and Go runtime timers. The zero value
// is ready to use.
type System = timerq.System

// Precise is the wall clock with precise alarms: on Linux, timerfd
// deadlines waited for in the Go runtime's network poller, so that timers
// start within tens of microseconds of their deadlines rather than Go
// runtime timers' whole milliseconds when the process idles; elsewhere it
// is System. Periodic timers on it start on a 1 ms grid, and one-shot
// timers on a 100 µs one, so that they share wake-ups
// (docs/performance.md in the repository gives the costs). Its Grid,
// Lead, IdleLead and Step methods are the executor's. The zero value is
// ready to use.
type Precise = timerq.Precise

// PreciseSupported reports whether Precise alarms are precise here.
func PreciseSupported() bool { return timerq.PreciseSupported() }
