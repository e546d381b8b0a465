package timerq

import (
	"sync"
	"time"
)

// Sim is a simulated clock: time stands still until it is advanced (by a
// test, or by the clock topic with use_sim_time), and alarms fire on the
// advancing goroutine, in deadline order, each at its own time. It goes
// back only when it is set back ([Sim.Rewind]). Tests use it to test timer
// logic deterministically.
type Sim struct {
	mu       sync.Mutex
	now      time.Time
	alarms   []*simAlarm
	onRewind []func(to time.Time)
}

// NewSim returns a simulated clock that reads start.
func NewSim(start time.Time) *Sim { return &Sim{now: start} }

// InitSim makes *s, a zero Sim, read start, for a Sim allocated as part of
// another value.
func InitSim(s *Sim, start time.Time) { s.now = start }

// Now returns the simulated time.
func (s *Sim) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

// NewAlarm returns an unset alarm of the simulated clock.
func (s *Sim) NewAlarm(f func()) Alarm {
	a := &simAlarm{clock: s, f: f}
	s.mu.Lock()
	s.alarms = append(s.alarms, a)
	s.mu.Unlock()
	return a
}

// Advance moves the clock forward by d, firing every alarm that falls due on
// the way at its own deadline, earliest first. Alarms set by the alarms it
// fires are honoured within the same advance.
func (s *Sim) Advance(d time.Duration) {
	s.mu.Lock()
	target := s.now.Add(d)
	s.mu.Unlock()
	s.AdvanceTo(target)
}

// AdvanceTo moves the clock forward to t (never back), firing the alarms that
// fall due as [Sim.Advance] does.
func (s *Sim) AdvanceTo(t time.Time) {
	for {
		s.mu.Lock()
		var due *simAlarm
		for _, a := range s.alarms {
			if a.armed && !a.when.After(t) && (due == nil || a.when.Before(due.when)) {
				due = a
			}
		}
		if due == nil {
			if t.After(s.now) {
				s.now = t
			}
			s.mu.Unlock()
			return
		}
		if due.when.After(s.now) {
			s.now = due.when
		}
		due.armed = false
		s.mu.Unlock()
		due.f()
	}
}

// Rewind sets the clock back to t, as a clock topic does when its
// playback starts over. No alarm fires: those set for later than t stay
// set for their times. Then each function given to [Sim.OnRewind] is
// called with t, in the order given, on the calling goroutine; a [Queue]
// on the clock re-arms its timers there. A t that is not before the
// clock's time does nothing: forward is [Sim.AdvanceTo]'s way.
func (s *Sim) Rewind(t time.Time) {
	s.mu.Lock()
	if !t.Before(s.now) {
		s.mu.Unlock()
		return
	}
	s.now = t
	fs := s.onRewind
	s.mu.Unlock()
	// Called outside the lock: they set alarms of the clock.
	for _, f := range fs {
		f(t)
	}
}

// OnRewind registers f to be called with the clock's new time each time
// [Sim.Rewind] sets it back, after the clock reads that time. It makes Sim
// a [RewindClock].
func (s *Sim) OnRewind(f func(to time.Time)) {
	s.mu.Lock()
	s.onRewind = append(s.onRewind[:len(s.onRewind):len(s.onRewind)], f)
	s.mu.Unlock()
}

// Next returns the earliest time an alarm is set for, and false if none is
// set. Tests use it to step from deadline to deadline.
func (s *Sim) Next() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var next time.Time
	ok := false
	for _, a := range s.alarms {
		if a.armed && (!ok || a.when.Before(next)) {
			next, ok = a.when, true
		}
	}
	return next, ok
}

type simAlarm struct {
	clock *Sim
	f     func()
	when  time.Time
	armed bool
}

func (a *simAlarm) Set(t time.Time) {
	a.clock.mu.Lock()
	a.when, a.armed = t, true
	a.clock.mu.Unlock()
}

func (a *simAlarm) Stop() {
	a.clock.mu.Lock()
	a.armed = false
	a.clock.mu.Unlock()
}
