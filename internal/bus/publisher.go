package bus

import (
	"context"
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
	// err, when set (Failed), is what every publication returns.
	err error
	// before, when set (WithBefore), is told of each publication before
	// it is published, unless its context refuses it.
	before func(ctx context.Context, payload []byte)
}

// Failed returns a publisher on topic whose publications all return err:
// what a node's Publisher gives for a topic that it could not publish on.
func Failed(topic string, err error) *Publisher { return &Publisher{topic: topic, err: err} }

// pubCache is where a publisher's publications go, for as long as the
// router's index and its audience keep their generations.
type pubCache struct {
	gen, agen uint64
	subs      []*Subscription // the local subscriptions
	out       bool            // the remote gets them
	one       bool            // only the one local subscription does
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

// WithBefore tells f of each publication, before it is published, unless
// its context refuses it: a node's publications are recorded so.
func WithBefore(f func(ctx context.Context, payload []byte)) PublishOption {
	return func(p *Publisher) { p.before = f }
}

// Topic returns the publisher's topic.
func (p *Publisher) Topic() string { return p.topic }

// Publish publishes payload with the publisher's QoS and retain flag: see
// PublishMessage.
func (p *Publisher) Publish(ctx context.Context, payload []byte) error {
	_, err := p.PublishMessage(ctx, p.Message(payload))
	return err
}

// PublishMessage publishes m on the publisher's topic (m.Topic is set to
// it), with m's own QoS and retain flag, stamped with the time now if
// m.Received is zero. The matching subscriptions of this process (see
// [Router]) get it directly; the router's remote gets it for everyone
// else. It returns how many local subscriptions accepted m and the
// remote's error, if it failed to take m. The payload must not be
// modified afterwards.
//
// Under a callback's run context (see [Run]) the publication is the
// run's and never waits. Under any other context, a full local
// subscription with the Block policy is waited for until there is room
// or ctx is done; PublishMessage then returns ctx's error and sends m
// nowhere else. A ctx that is already done refuses m at once.
func (p *Publisher) PublishMessage(ctx context.Context, m Message) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	m.Topic = p.topic
	if p.before != nil && ctx.Err() == nil {
		p.before(ctx, m.Payload)
	}
	// route and RunOf, inlined: their calls cost as much as their
	// tests.
	c := p.cache.Load()
	if c == nil || c.gen != p.r.index.Generation() || p.r.opts.Audience != nil {
		c = p.route()
	}
	run, isRun := ctx.(*Run)
	if !isRun {
		run = runAbove(ctx)
	}
	if run == nil && c.one && !m.Retained {
		return p.r.publishOne(ctx, &m, c.subs)
	}
	return p.r.publish(ctx, run, &m, c.subs, c.out)
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
	c.one = len(c.subs) == 1 && !c.out
	p.cache.Store(c)
	return c
}

// String describes the publisher.
func (p *Publisher) String() string { return fmt.Sprintf("publisher(%s)", p.topic) }

// offering is how a publication reaches local subscriptions: a run's
// (run set) through offer, which never waits, and any other through
// deliver, which waits for room under ctx.
type offering struct {
	run *Run
	ctx context.Context
}

// deliver hands *m to subs and returns how many accepted it, with at as its
// time stamp where m has none (see stamp). It takes a pointer, so that the
// message is copied once, into each queue. It stops at the first
// subscription that ctx's end kept from accepting m, with ctx's error.
func (o offering) deliver(m *Message, at stamp, subs []*Subscription) (int, error) {
	n := 0
	for _, s := range subs {
		if o.run == nil {
			accepted, err := s.deliver(o.ctx, m, at)
			if err != nil {
				return n, err
			}
			if accepted {
				n++
			}
			continue
		}
		accepted, over := s.offer(m, at, o.run.handoff())
		if accepted {
			n++
		}
		if over {
			o.run.overloaded(s)
		}
	}
	return n, nil
}

// Message returns a message of payload with the publisher's topic, QoS and
// retain flag: what Publish publishes.
func (p *Publisher) Message(payload []byte) Message {
	return Message{Topic: p.topic, Payload: payload, QoS: p.qos, Retained: p.retain}
}
