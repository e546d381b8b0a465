package timerq

import "time"

// Precise is the wall clock with precise alarms: on Linux each alarm is a
// timerfd armed on CLOCK_MONOTONIC, relative to now, which a goroutine
// waits for in the Go runtime's network poller, so that an alarm rings
// within tens of microseconds of its deadline instead of the Go runtime
// timers' rounding to whole milliseconds when the process idles. The
// thread that waits in the poller wakes at the deadline, rings, and then
// runs the worker the ring woke, on the same thread; with an executor, the
// queue rings a lead ahead of the deadline instead (PreciseLead, or
// PreciseIdleLead for a deadline far ahead; see Fast.SetEarly), so that a
// worker is running when it comes. Elsewhere it is System.
//
// Costs: one goroutine and one file descriptor per alarm (a timer queue
// has one alarm for all its timers), and a wake-up of the process per
// distinct deadline; the alarm's system calls are raw, so that they do not
// stir the runtime's monitor. For the poller to run Go code as soon as the
// deadline passes, a processor must be free: a program whose workers keep
// every processor busy should run with GOMAXPROCS above its worker count
// (robotexec run does so).
//
// Timers on a Precise clock start on a grid, so that timers share
// wake-ups: a periodic timer's first deadline (a period after it starts) is
// rounded up to a multiple of PreciseGrid, a one-shot timer's deadline to
// a multiple of PreciseStep; later deadlines follow from the first,
// drift-free. Periodic timers then fall due at most about once a
// millisecond however many there are and whatever their phases, each
// wake-up serving all the timers due at it: a thousand timers at 100 Hz
// started at random times cost a thousand wake-ups a second, each with
// its spin of up to PreciseLead, not a hundred thousand. A grid point
// takes at most PreciseGroup timers as they start; the next ones start a
// PreciseStep later, and so on, so that no group is so large that its
// last timer starts long after the deadline (a worker serves about one
// timer each 0.25–0.35 µs).
//
// An alarm of Precise must be closed (Queue.Stop does it) to release its
// goroutine and descriptor. The zero value is ready to use.
type Precise struct{}

// PreciseGrid is the grid of periodic timers' first deadlines on a
// Precise clock.
const PreciseGrid = time.Millisecond

// PreciseStep is the grid of one-shot timers' deadlines on a Precise
// clock, and how much later than its grid point a periodic timer starts
// when PreciseGroup timers started on that point already.
const PreciseStep = 100 * time.Microsecond

// PreciseGroup is the most timers that start on one deadline of a Precise
// clock's grid (see PreciseStep).
const PreciseGroup = 128

// PreciseLead is how long before a deadline a Precise clock's timer queue
// rings early (Fast.SetEarly): longer than most wake-ups of a sleeping
// thread take here (40–80 µs in a virtual machine), so that an executor's
// worker is running, polling, when the deadline comes. It costs the part
// of it that the wake-up does not take, spinning, once per distinct
// deadline.
const PreciseLead = 100 * time.Microsecond

// PreciseIdleLead replaces PreciseLead for a deadline more than
// PreciseIdleAfter ahead when its alarm is set. After milliseconds of
// idling, this virtual machine woke the alarm's thread more than 100 µs
// late in about one ring in ten (a thousand timers at 100 Hz started
// their first group late by 150–200 µs that often, the p99), and the
// second worker the ring woke ran 100–170 µs after the first: the kernel
// put its thread on the first one's CPU while the other CPU idled,
// halted. Ringing 450 µs ahead leaves time for both wake-ups before a
// group of timers falls due; against 250 µs, a thousand timers at
// 100 Hz had the lower lateness p99 under robotexec run in 6 of 7
// alternated pairs of `robotexec bench -only run`. It costs the part
// that a prompt wake-up leaves, spinning, once per such deadline, for
// each worker woken: up to about 17% of one core a worker at a deadline
// every 2 ms, 3.5% at 100 Hz (the process of the thousand timers took
// 14.0% of a core against 12.1% with 250 µs, by the medians of those
// runs).
const PreciseIdleLead = 450 * time.Microsecond

// PreciseIdleAfter is how far ahead a deadline must be, when its alarm is
// set, for PreciseIdleLead to apply.
const PreciseIdleAfter = 2 * time.Millisecond

// Now returns time.Now().
func (Precise) Now() time.Time { return time.Now() }

func (Precise) realTime() {}

// Grid returns PreciseGrid: timer queues align periodic timers' first
// deadlines to it.
func (Precise) Grid() time.Duration { return PreciseGrid }

// Step returns PreciseStep and PreciseGroup: timer queues align one-shot
// deadlines to the step, and start at most group timers on one deadline,
// the next a step later.
func (Precise) Step() (step time.Duration, group int) { return PreciseStep, PreciseGroup }

// Lead returns PreciseLead: timer queues ring early by it.
func (Precise) Lead() time.Duration { return PreciseLead }

// IdleLead returns PreciseIdleLead and PreciseIdleAfter: a timer queue
// rings that early for deadlines that far ahead.
func (Precise) IdleLead() (lead, after time.Duration) { return PreciseIdleLead, PreciseIdleAfter }

// NewAlarm returns a precise alarm that calls f on a goroutine of its own, or a
// System alarm where precise alarms are not supported.
func (Precise) NewAlarm(f func()) Alarm {
	if a := newPreciseAlarm(f); a != nil {
		return a
	}
	return System{}.NewAlarm(f)
}

// PreciseSupported reports whether Precise alarms are precise here.
func PreciseSupported() bool { return preciseSupported }
