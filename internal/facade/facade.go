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
	"unsafe"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/subscribers"
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
func Message(m *bus.Message) *subscribers.Message { return (*subscribers.Message)(m) }
