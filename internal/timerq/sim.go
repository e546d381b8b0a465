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
	// advancing counts the AdvanceTo calls under way, which fire the
	// alarms set meanwhile for times they reach.
	advancing int
	// fireReached: an alarm set for a time the clock has reached, while
	// no advance is under way, fires on a goroutine of its own
	// (FireReached).
	fireReached bool
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
	s.mu.Lock()
	s.advancing++
	s.mu.Unlock()
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
			s.advancing--
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

// FireReached makes an alarm set for a time the clock has reached fire
// soon after, on a goroutine of its own, as a real clock's would, unless
// an advance is under way (the advance fires it, in order). Without it,
// such an alarm waits for the next advance, as a test that steps a queue
// on one goroutine wants. A running executor wants it fired: its workers
// re-arm timers while another goroutine advances the clock, and a timer
// re-armed for a deadline after the advance that reached it had looked
// at the alarms would wait for the next advance, which may never come
// (the last clock message of a playback).
func (s *Sim) FireReached() {
	s.mu.Lock()
	s.fireReached = true
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

// Set arms the alarm for t; see [Sim.FireReached] for a t the clock has
// reached.
func (a *simAlarm) Set(t time.Time) {
	s := a.clock
	s.mu.Lock()
	a.when, a.armed = t, true
	reached := s.fireReached && s.advancing == 0 && !t.After(s.now)
	s.mu.Unlock()
	if reached {
		go a.fireReached()
	}
}

// fireReached fires the alarm if it is still set for a time the clock has
// reached and no advance is under way (one would fire it, in order).
func (a *simAlarm) fireReached() {
	s := a.clock
	s.mu.Lock()
	fire := a.armed && s.advancing == 0 && !a.when.After(s.now)
	if fire {
		a.armed = false
	}
	s.mu.Unlock()
	if fire {
		a.f()
	}
}

func (a *simAlarm) Stop() {
	a.clock.mu.Lock()
	a.armed = false
	a.clock.mu.Unlock()
}
