package timers

import (
	"sync"
	"time"
)

// Sim is a simulated clock: time stands still until it is advanced (by a
// test, or by the clock topic with use_sim_time), and alarms fire on the
// advancing goroutine, in deadline order, each at its own time. Tests use
// it to test timer logic deterministically.
type Sim struct {
	mu     sync.Mutex
	now    time.Time
	alarms []*simAlarm
}

// NewSim returns a simulated clock that reads start.
func NewSim(start time.Time) *Sim { return &Sim{now: start} }

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
