package subscribers

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/robotexec/robotexec/internal/bus"
)

// Router is a process's one message path: a publication reaches the
// matching subscriptions attached to it directly and, with robotexec run,
// the broker for everyone else. Its zero value is a router of QoS 0
// without a payload limit.
type Router struct {
	// r is the router; a Router is nothing else, so that robotexec's own
	// packages convert between the two (internal/facade).
	r bus.Router
}

// RouterOptions configure a Router made by NewRouter.
type RouterOptions struct {
	// QoS is the MQTT QoS of subscriptions attached with Attach, and of
	// the router's publishers.
	QoS byte
	// MaxPayload, when positive, refuses a publication with a larger
	// payload with ErrTooLarge, and counts it (Router.TooLarge).
	MaxPayload int
}

// NewRouter returns a router.
func NewRouter(opts RouterOptions) *Router {
	r := bus.NewRouter(bus.RouterOptions{QoS: opts.QoS, MaxPayload: opts.MaxPayload})
	return routerOf(r)
}

// Attach starts delivering to s the messages whose topic matches its
// filter, beginning with the retained ones, at the router's QoS.
func (r *Router) Attach(s *Subscription) error { return r.r.Attach(&s.s) }

// Detach stops delivering to s.
func (r *Router) Detach(s *Subscription) { r.r.Detach(&s.s) }

// QoS returns a source that attaches subscriptions to r at MQTT QoS q.
func (r *Router) QoS(q byte) Source { return qosSource{r.r.QoS(q)} }

// qosSource is a Router's source at another QoS.
type qosSource struct{ src bus.Source }

func (q qosSource) Attach(s *Subscription) error { return q.src.Attach(&s.s) }
func (q qosSource) Detach(s *Subscription)       { q.src.Detach(&s.s) }

// Publish publishes m on m.Topic, as Publisher.PublishMessage does; a
// Publisher spares the topic's lookup.
func (r *Router) Publish(ctx context.Context, m Message) (int, error) {
	return r.r.Publish(ctx, *busMessage(&m))
}

// Publisher returns a publisher on topic, which must be a valid topic name
// (no wildcards): its Publish publishes at the router's QoS, not
// retained.
func (r *Router) Publisher(topic string) (*Publisher, error) {
	p, err := r.r.Publisher(topic, bus.WithQoS(r.r.QoSDefault()))
	if err != nil {
		return nil, err
	}
	return publisherOf(p), nil
}

// TooLarge counts the publications refused for a payload over
// RouterOptions.MaxPayload.
func (r *Router) TooLarge() uint64 { return r.r.TooLarge() }

// Publisher publishes on one topic through a router. It remembers which
// subscriptions of this process a publication reaches until the router's
// subscriptions change, so a publication costs no lookup and, in
// process, no allocation.
//
// Under a callback's run context a publication is the callback's: it
// never waits for room, and one into a full block queue mutes the
// callback after its run until the queue drains (backpressure,
// docs/design.md in the repository). Under any other context, a
// publication into a full block queue waits for room until the context is
// done, then returns the context's error. A context that is done (a
// finished run's, kept by a goroutine) refuses the publication at once
// with its error.
type Publisher struct {
	// p is the publisher; a Publisher is nothing else, so that robotexec's
	// own packages convert between the two (internal/facade).
	p bus.Publisher
}

// Topic returns the publisher's topic.
func (p *Publisher) Topic() string { return p.p.Topic() }

// Publish publishes payload under ctx with the publisher's QoS and retain
// flag: see PublishMessage. The payload must not be modified afterwards.
func (p *Publisher) Publish(ctx context.Context, payload []byte) error {
	return p.p.Publish(ctx, payload)
}

// PublishJSON publishes v encoded with encoding/json.
func (p *Publisher) PublishJSON(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("publisher %q: %w", p.p.Topic(), err)
	}
	return p.p.Publish(ctx, b)
}

// PublishMessage publishes m on the publisher's topic (m.Topic is set to
// it), with m's own QoS and retain flag, stamped with the time now if
// m.Received is zero: to the matching subscriptions of this process, each
// once, and to the broker for everyone else. It returns how many local
// subscriptions accepted m and the error of ctx or of the broker
// connection, if it could not take m.
func (p *Publisher) PublishMessage(ctx context.Context, m Message) (int, error) {
	return p.p.PublishMessage(ctx, *busMessage(&m))
}

// String describes the publisher.
func (p *Publisher) String() string { return p.p.String() }
