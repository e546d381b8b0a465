package timerq

import (
	"sync"
	"time"
)

// Clock tells the time and wakes its users at given times.
//
// A clock may also have optional capabilities, which a [Queue] on it finds
// by type assertion when it is made: [GridClock], [StepClock], [LeadClock],
// [IdleLeadClock] and [RewindClock]. [Precise] has the first four, [Sim]
// the last.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewAlarm returns an unset alarm that calls f each time the clock
	// reaches the time the alarm was set to.
	NewAlarm(f func()) Alarm
}

// Alarm calls a function once the clock reaches the time it is set to.
type Alarm interface {
	// Set arms the alarm for t, replacing any earlier setting. A time in
	// the past fires as soon as possible.
	Set(t time.Time)
	// Stop disarms the alarm. A call already under way may still finish.
	Stop()
}

// GridClock is a [Clock] whose timer queues start timers on a grid, so that
// timers share wake-ups: a periodic timer's first deadline (a period after
// it starts) is rounded up to a multiple of Grid, and so is a one-shot
// timer's deadline unless the clock is a [StepClock]. Later deadlines of a
// periodic timer follow from the first.
type GridClock interface {
	// Grid returns the grid; 0 or less means none.
	Grid() time.Duration
}

// StepClock is a [Clock] whose timer queues round one-shot timers' deadlines
// up to a multiple of a step, and start at most group periodic timers on one
// deadline of the [GridClock] grid: the next ones start a step later, or the
// next step, and so on. The group limit applies only with a grid, and with a
// positive step and group.
type StepClock interface {
	// Step returns the step (0 or less: none) and the most timers that
	// start on one deadline (0 or less: no limit).
	Step() (step time.Duration, group int)
}

// LeadClock is a [Clock] whose timer queues ring early, Lead ahead of each
// deadline, for the function given to [Fast.SetEarly].
type LeadClock interface {
	// Lead returns how long before a deadline the queue rings first; 0
	// or less means it does not ring early.
	Lead() time.Duration
}

// IdleLeadClock is a [Clock] with a longer lead than its [LeadClock] one for
// deadlines far ahead, as the machine may idle deeply meanwhile and wake
// late: for a deadline more than after ahead when its alarm is set, a timer
// queue rings lead ahead of it instead of Lead ahead, if lead is the
// longer. It has no effect on a clock that is not a LeadClock with a
// positive Lead.
type IdleLeadClock interface {
	// IdleLead returns the lead for a deadline far ahead and how far
	// ahead it must be.
	IdleLead() (lead, after time.Duration)
}

// RewindClock is a [Clock] whose time can be set back, as [Sim.Rewind]
// does. A timer queue on it re-arms its timers each time it is, as rcl
// does on a backward jump of ROS time: a timer whose next deadline is
// more than its period (a one-shot timer: its delay) after the new time
// starts again from the new time, as [Timer.Reset] would start it there;
// the others keep their deadlines, which are at most a period away. A
// timer that fell due before the jump, for a deadline that is now ahead,
// is not called: it waits for its deadline by the same rule.
type RewindClock interface {
	// OnRewind registers f, called with the clock's new time each time
	// the clock is set back, once it reads that time.
	OnRewind(f func(to time.Time))
}

// Precise has every optional capability but RewindClock; Sim has that one.
var (
	_ GridClock     = Precise{}
	_ StepClock     = Precise{}
	_ LeadClock     = Precise{}
	_ IdleLeadClock = Precise{}
	_ RewindClock   = (*Sim)(nil)
)

// System is the wall clock: time.Now and Go runtime timers. The zero value
// is ready to use.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// NewAlarm returns an alarm backed by a runtime timer; f runs on a goroutine
// of its own.
func (System) NewAlarm(f func()) Alarm { return &sysAlarm{f: f} }

// realTime marks the clocks that keep the time of the machine, which the
// time-stamp counter keeps too: queues on them can be polled (Fast.Poll).
// A clock that embeds one of them is one of them.
type realTime interface{ realTime() }

func (System) realTime() {}

type sysAlarm struct {
	mu sync.Mutex
	f  func()
	t  *time.Timer
}

func (a *sysAlarm) Set(t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	d := time.Until(t)
	if a.t == nil {
		a.t = time.AfterFunc(d, a.f)
		return
	}
	a.t.Reset(d)
}

func (a *sysAlarm) Stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.t != nil {
		a.t.Stop()
	}
}
