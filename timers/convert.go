package timers

import (
	"time"
	"unsafe"

	"github.com/robotexec/robotexec/internal/timerq"
)

// timerOf returns the Timer that t is: a Timer is nothing but the queue's
// timer of the same name.
func timerOf(t *timerq.Timer) *Timer { return (*Timer)(unsafe.Pointer(t)) }

// clockOf returns the queue's clock for c: the queue's own for the clocks
// of this package (whose grid, lead and rewinds it knows), c itself, with
// its alarms, for any other.
func clockOf(c Clock) timerq.Clock {
	switch c := c.(type) {
	case nil:
		return nil
	case System:
		return timerq.System{}
	case Precise:
		return timerq.Precise{}
	case *Sim:
		return &c.s
	}
	return otherClock{c}
}

// otherClock is a Clock of a program's own, for the queue.
type otherClock struct{ c Clock }

func (o otherClock) Now() time.Time                 { return o.c.Now() }
func (o otherClock) NewAlarm(f func()) timerq.Alarm { return o.c.NewAlarm(f) }
