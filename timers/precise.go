package timers

import "time"

// Precise is the wall clock with precise alarms: on Linux each alarm is a
// timerfd armed on absolute CLOCK_MONOTONIC deadlines, read by a goroutine
// locked to an OS thread of its own, so that an alarm rings within tens of
// microseconds of its deadline instead of the Go runtime timers' rounding
// to whole milliseconds when the process idles. Elsewhere it is System.
//
// Costs: one OS thread and one file descriptor per alarm (a timer queue
// has one alarm for all its timers), and the thread's wake-ups. For the
// thread to run Go code as soon as it wakes, a processor must be free: a
// program whose workers keep every processor busy should run with
// GOMAXPROCS above its worker count (robotexec run does so).
//
// Timers on a Precise clock start on a grid: a timer's first deadline (a
// period after it starts) is rounded up to a multiple of PreciseGrid, so
// that timers started around the same time fall due together and share
// wake-ups; later deadlines follow from the first, drift-free. A thousand
// timers at 100 Hz then cost a few thousand wake-ups a second, not a
// hundred thousand.
//
// An alarm of Precise must be closed (Queue.Stop does it) to release its
// thread and descriptor. The zero value is ready to use.
type Precise struct{}

// PreciseGrid is the grid of first deadlines on a Precise clock.
const PreciseGrid = 100 * time.Microsecond

// Now returns time.Now().
func (Precise) Now() time.Time { return time.Now() }

// Grid returns PreciseGrid: timer queues align first deadlines to it.
func (Precise) Grid() time.Duration { return PreciseGrid }

// NewAlarm returns a precise alarm that calls f on its own OS thread, or a
// System alarm where precise alarms are not supported.
func (Precise) NewAlarm(f func()) Alarm {
	if a := newPreciseAlarm(f); a != nil {
		return a
	}
	return System{}.NewAlarm(f)
}

// PreciseSupported reports whether Precise alarms are precise here.
func PreciseSupported() bool { return preciseSupported }
