package timers

import (
	"time"

	"github.com/robotexec/robotexec/internal/timerq"
)

// Clock is what timers run on: the time, and alarms that call a function
// once the clock reaches the time they are set to. Executor options take
// one; nil means System.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewAlarm returns an unset alarm that calls f each time the clock
	// reaches the time the alarm was set to.
	NewAlarm(f func()) Alarm
}

// Alarm calls a function once its clock reaches the time it is set to.
type Alarm interface {
	// Set arms the alarm for t, replacing any earlier setting. A time in
	// the past fires as soon as possible.
	Set(t time.Time)
	// Stop disarms the alarm. A call already under way may still finish.
	Stop()
}

// System is the wall clock: time.Now and Go runtime timers. The zero value
// is ready to use.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// NewAlarm returns an alarm on a Go runtime timer.
func (System) NewAlarm(f func()) Alarm { return timerq.System{}.NewAlarm(f) }

// Precise is the wall clock with precise alarms: on Linux, timerfd
// deadlines waited for in the Go runtime's network poller, so that timers
// start within tens of microseconds of their deadlines rather than Go
// runtime timers' whole milliseconds when the process idles; elsewhere it
// is System. Periodic timers on it start on a 1 ms grid, and one-shot
// timers on a 100 µs one, so that they share wake-ups
// (docs/performance.md in the repository gives the costs). The zero
// value is ready to use.
type Precise struct{}

// Now returns time.Now().
func (Precise) Now() time.Time { return time.Now() }

// NewAlarm returns a precise alarm.
func (Precise) NewAlarm(f func()) Alarm { return timerq.Precise{}.NewAlarm(f) }

// PreciseSupported reports whether Precise alarms are precise here.
func PreciseSupported() bool { return timerq.PreciseSupported() }

// Sim is a simulated clock: time stands still until it is advanced (by a
// test, or by the clock topic with use_sim_time), and alarms fire on the
// advancing goroutine, in deadline order, each at its own time. Rewind
// sets it back, as the clock topic does when a playback starts over; the
// executor's timers then re-arm on the new time. Once an executor on the
// clock runs (Run), a timer that a worker re-arms for a time the clock
// has already reached fires then, as on a real clock, without waiting
// for the next advance.
type Sim struct {
	// s is the clock; a Sim is nothing else, so that robotexec's own
	// packages convert between the two (internal/facade).
	s timerq.Sim
}

// NewSim returns a simulated clock that reads start.
func NewSim(start time.Time) *Sim {
	s := new(Sim)
	timerq.InitSim(&s.s, start)
	return s
}

// Now returns the simulated time.
func (s *Sim) Now() time.Time { return s.s.Now() }

// NewAlarm returns an alarm of the simulated clock.
func (s *Sim) NewAlarm(f func()) Alarm { return s.s.NewAlarm(f) }

// Advance moves the clock d forward, firing the alarms that fall due on
// the way, each at its own time, in order.
func (s *Sim) Advance(d time.Duration) { s.s.Advance(d) }

// AdvanceTo moves the clock forward to t, as Advance does; a t before
// the clock's time does nothing.
func (s *Sim) AdvanceTo(t time.Time) { s.s.AdvanceTo(t) }

// Rewind sets the clock back to t; the executor's timers re-arm on it.
func (s *Sim) Rewind(t time.Time) { s.s.Rewind(t) }

// OnRewind registers f to be called with the new time each time the clock
// is set back (Rewind), as a node that keeps deadlines of its own needs.
func (s *Sim) OnRewind(f func(to time.Time)) { s.s.OnRewind(f) }
