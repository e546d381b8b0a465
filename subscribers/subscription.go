package subscribers

import (
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/waitset"
)

// Subscription is a topic filter with its own bounded FIFO queue of
// messages, for one callback. An executor makes one for each Subscribe;
// a program with a scheduling loop of its own makes them with New.
type Subscription struct {
	// s is the subscription; a Subscription is nothing else, so that
	// robotexec's own packages convert between the two (internal/facade).
	s bus.Subscription
}

// New returns a subscription to filter, a valid MQTT topic filter, with
// the queue opts gives. Register its Entity with a wait set, then attach
// it to a source (Router.Attach): a source delivers only to registered
// subscriptions.
func New(filter string, opts Options) (*Subscription, error) {
	s := new(Subscription)
	if err := bus.Init(&s.s, filter, opts.bus()); err != nil {
		return nil, err
	}
	return s, nil
}

// ID returns the subscription's ID, its wait set entity's.
func (s *Subscription) ID() uint64 { return s.s.ID() }

// Filter returns the subscription's topic filter.
func (s *Subscription) Filter() string { return s.s.Filter() }

// Options returns the subscription's queue settings, defaults applied.
func (s *Subscription) Options() Options {
	o := s.s.Options()
	return Options{Depth: o.Depth, Overflow: Policy(o.Overflow), Threshold: o.Threshold}
}

// Stats returns the subscription's counters.
func (s *Subscription) Stats() Stats { return Stats(s.s.Stats()) }

// Len returns the number of queued messages.
func (s *Subscription) Len() int { return s.s.Len() }

// Drop counts a message dropped for reason r outside the queue, for
// example one that failed to decode or came over a rate limit.
func (s *Subscription) Drop(r Reason) { s.s.Drop(bus.Reason(r)) }

// Deliver offers m to the queue, as a source does. It applies the
// overflow policy when the queue is full, counts every drop, and triggers
// the subscription's entity when it accepts m, which it reports. With
// the Block policy it waits for room; a closed subscription refuses
// every message.
func (s *Subscription) Deliver(m Message) bool { return s.s.Deliver(*busMessage(&m)) }

// Entity returns the subscription's wait set entity, which a message
// into the empty queue triggers.
func (s *Subscription) Entity() *waitset.Entity { return bus.Entity(&s.s) }

// Take takes the front message into *m, for a scheduling loop that runs
// the subscription's entity: it reports whether there was one and whether
// more remain.
func (s *Subscription) Take(m *Message) (ok, more bool) {
	_, ok, more = bus.TakeInto(&s.s, busMessage(m))
	return ok, more
}

// Close detaches the subscription from its source and refuses every later
// message (counted as dropped, reason Closed). Producers waiting under
// the Block policy return. Messages already accepted stay queued. Close
// is idempotent.
func (s *Subscription) Close() { s.s.Close() }

// Source delivers messages to the subscriptions attached to it; a Router
// is one.
type Source interface {
	// Attach starts delivering to s the messages its filter matches.
	Attach(s *Subscription) error
	// Detach stops delivering to s.
	Detach(s *Subscription)
}
