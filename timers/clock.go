package timers

import (
	"sync"
	"time"
)

// Clock tells the time and wakes its users at given times.
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

// System is the wall clock: time.Now and Go runtime timers. The zero value
// is ready to use.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// NewAlarm returns an alarm backed by a runtime timer; f runs on a goroutine
// of its own.
func (System) NewAlarm(f func()) Alarm { return &sysAlarm{f: f} }

// realTime marks the clocks that keep the time of the machine, which the
// time-stamp counter keeps too: queues on them can be polled (Queue.Poll).
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
