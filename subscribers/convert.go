package subscribers

import (
	"unsafe"

	"github.com/robotexec/robotexec/internal/bus"
)

// Router, Publisher and Subscription are each nothing but the bus's value
// of the same name: a pointer to the bus's is a pointer to this package's.

func routerOf(r *bus.Router) *Router          { return (*Router)(unsafe.Pointer(r)) }
func publisherOf(p *bus.Publisher) *Publisher { return (*Publisher)(unsafe.Pointer(p)) }
