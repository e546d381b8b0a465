// Package facade converts between the public types of packages
// subscribers and timers and the types of robotexec's own packages that
// they are made of: each public type (subscribers.Subscription,
// subscribers.Router, subscribers.Publisher, timers.Timer) holds nothing
// but its internal value, so a pointer to the one is a pointer to the
// other. The public packages keep their methods to what a user calls; the
// executor and the MQTT client reach the rest through these conversions.
// TestLayouts checks that each pair still has one layout.
package facade

import (
	"time"
	"unsafe"

	publicconfig "github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/internal/config"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// Sub returns the bus subscription that s is.
func Sub(s *subscribers.Subscription) *bus.Subscription {
	return (*bus.Subscription)(unsafe.Pointer(s))
}

// PublicSub returns the public subscription that s is.
func PublicSub(s *bus.Subscription) *subscribers.Subscription {
	return (*subscribers.Subscription)(unsafe.Pointer(s))
}

// Router returns the bus router that r is.
func Router(r *subscribers.Router) *bus.Router { return (*bus.Router)(unsafe.Pointer(r)) }

// PublicRouter returns the public router that r is.
func PublicRouter(r *bus.Router) *subscribers.Router {
	return (*subscribers.Router)(unsafe.Pointer(r))
}

// Publisher returns the bus publisher that p is.
func Publisher(p *subscribers.Publisher) *bus.Publisher {
	return (*bus.Publisher)(unsafe.Pointer(p))
}

// PublicPublisher returns the public publisher that p is.
func PublicPublisher(p *bus.Publisher) *subscribers.Publisher {
	return (*subscribers.Publisher)(unsafe.Pointer(p))
}

// Message returns the public message m is.
func Message(m *bus.Message) *subscribers.Message {
	return (*subscribers.Message)(unsafe.Pointer(m))
}

// BusMessage returns the bus message m is.
func BusMessage(m *subscribers.Message) *bus.Message { return (*bus.Message)(unsafe.Pointer(m)) }

// Timer returns the queue's timer that t is.
func Timer(t *timers.Timer) *timerq.Timer { return (*timerq.Timer)(unsafe.Pointer(t)) }

// PublicTimer returns the public timer that t is.
func PublicTimer(t *timerq.Timer) *timers.Timer { return (*timers.Timer)(unsafe.Pointer(t)) }

// Sim returns the queue's simulated clock that s is.
func Sim(s *timers.Sim) *timerq.Sim { return (*timerq.Sim)(unsafe.Pointer(s)) }

// Clock returns the queue's clock for c, as timers.NewQueue uses it.
func Clock(c timers.Clock) timerq.Clock {
	switch c := c.(type) {
	case nil:
		return timerq.System{}
	case timers.System:
		return timerq.System{}
	case timers.Precise:
		return timerq.Precise{}
	case *timers.Sim:
		return Sim(c)
	}
	return otherClock{c}
}

// otherClock is a clock of a program's own, for a queue.
type otherClock struct{ c timers.Clock }

func (o otherClock) Now() time.Time                 { return o.c.Now() }
func (o otherClock) NewAlarm(f func()) timerq.Alarm { return o.c.NewAlarm(f) }

// Event returns the public event ev is.
func Event(ev timerq.Event) timers.Event { return timers.Event(ev) }

// Config returns the internal config that c is.
func Config(c *publicconfig.Config) *config.Config { return (*config.Config)(unsafe.Pointer(c)) }
