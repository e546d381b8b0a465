package bus

import (
	"fmt"
	"sync/atomic"
)

// Publisher publishes on one topic through a [Router]. It remembers which
// subscriptions of this process a publication reaches until the router's
// subscriptions change, so a publication costs no lookup and, in
// process, no allocation. It is safe for concurrent use.
type Publisher struct {
	r      *Router
	topic  string
	qos    byte
	retain bool
	cache  atomic.Pointer[pubCache]
}

// pubCache is where a publisher's publications go, for as long as the
// router's index and its audience keep their generations.
type pubCache struct {
	gen, agen uint64
	subs      []*Subscription // the local subscriptions
	out       bool            // the remote gets them
}

// Publisher returns a publisher on topic, which must be a valid topic name
// (no wildcards). Its Publish publishes with QoS 0, not retained, unless
// options say otherwise.
func (r *Router) Publisher(topic string, opts ...PublishOption) (*Publisher, error) {
	if err := ValidateTopic(topic); err != nil {
		return nil, err
	}
	p := &Publisher{r: r, topic: topic}
	for _, o := range opts {
		o(p)
	}
	if p.qos > 2 {
		return nil, fmt.Errorf("subscribers: publisher %q: QoS %d is not 0, 1 or 2", topic, p.qos)
	}
	return p, nil
}

// PublishOption sets what a [Publisher] publishes with.
type PublishOption func(*Publisher)

// WithQoS makes a publisher's Publish publish with QoS q.
func WithQoS(q byte) PublishOption { return func(p *Publisher) { p.qos = q } }

// WithRetain makes a publisher's Publish publish retained messages.
func WithRetain() PublishOption { return func(p *Publisher) { p.retain = true } }

// Topic returns the publisher's topic.
func (p *Publisher) Topic() string { return p.topic }

// Publish publishes payload with the publisher's QoS and retain flag: see
// PublishMessage.
func (p *Publisher) Publish(payload []byte) error {
	_, err := p.PublishMessage(p.Message(payload))
	return err
}

// PublishMessage publishes m on the publisher's topic (m.Topic is set to
// it), with m's own QoS and retain flag, stamped with the time now if
// m.Received is zero. The matching subscriptions of this process (see
// [Router]) get it directly, each through [Subscription.Deliver], which
// waits for room under the Block policy; the router's remote gets it for
// everyone else. It returns how many local subscriptions accepted m and
// the remote's error, if it failed to take m. The payload must not be
// modified afterwards.
func (p *Publisher) PublishMessage(m Message) (int, error) {
	m.Topic = p.topic
	c := p.route()
	return p.r.publish(&m, c.subs, c.out, nil)
}

// route returns where the topic's publications go.
func (p *Publisher) route() *pubCache {
	r := p.r
	gen := r.index.Generation()
	var agen uint64
	if a := r.opts.Audience; a != nil {
		agen = a.Generation()
	}
	if c := p.cache.Load(); c != nil && c.gen == gen && c.agen == agen {
		return c
	}
	c := &pubCache{gen: gen, agen: agen, out: r.wanted(p.topic)}
	if r.inProcess() {
		c.subs = r.localMatch(p.topic, nil)
	}
	p.cache.Store(c)
	return c
}

// String describes the publisher.
func (p *Publisher) String() string { return fmt.Sprintf("publisher(%s)", p.topic) }

// offering is how a publication made through Fast.Offer reaches local
// subscriptions; a nil *offering delivers through deliver.
type offering struct {
	quiet      bool
	overloaded func(*Subscription)
	// inCallback reports whether the publication comes from a callback
	// (nil: it does); asked at most once, and only where it matters.
	inCallback  func() bool
	asked, from bool // whether inCallback was asked, and its answer
}

// fromCallback reports whether the publication comes from a callback.
func (o *offering) fromCallback() bool {
	if o.inCallback == nil {
		return true
	}
	if !o.asked {
		o.asked, o.from = true, o.inCallback()
		// Not a callback's: no worker of its will look for what it
		// triggers, so the rest of the publication wakes one.
		o.quiet = o.quiet && o.from
	}
	return o.from
}

// deliver hands *m to subs and returns how many accepted it, with at as its
// time stamp where m has none (see stamp). It takes a pointer, so that the
// message is copied once, into each queue. Offered, a publication that
// does not come from a callback follows a publisher's rules where they
// differ: it waits for room in a full Block queue, and it reports no
// overloaded queue (it mutes no callback).
func (o *offering) deliver(m *Message, at stamp, subs []*Subscription) int {
	n := 0
	for _, s := range subs {
		if o == nil {
			if s.deliver(m, at) {
				n++
			}
			continue
		}
		accepted, over, full := s.offer(m, at, o.quiet, o.asked && o.from)
		if full {
			if o.fromCallback() {
				accepted, over, _ = s.offer(m, at, o.quiet, true)
			} else {
				accepted, over = s.deliver(m, at), false
			}
		}
		if accepted {
			n++
		}
		if over && o.overloaded != nil && o.fromCallback() {
			o.overloaded(s)
		}
	}
	return n
}

// Message returns a message of payload with the publisher's topic, QoS and
// retain flag: what Publish publishes.
func (p *Publisher) Message(payload []byte) Message {
	return Message{Topic: p.topic, Payload: payload, QoS: p.qos, Retained: p.retain}
}
