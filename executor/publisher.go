package executor

import (
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/waitset"
)

// Publisher publishes in-process, on a bus, for the callbacks of an owner,
// with the executor's backpressure and hand-off:
//
//   - Backpressure (seed 002's muting): a publication never waits and never
//     drops for the Block policy; when it leaves a subscription's queue at
//     or above its threshold (Depth unless set), the callback that
//     published is muted when its run ends: it is not scheduled (its
//     triggers wait in the wait set) until that queue drains below the
//     threshold. A pipeline's memory stays bounded without dropping data.
//     A callback that is itself an overloaded subscription is not muted, so
//     that cycles drain.
//   - Hand-off (seed 004): a publication that makes a dormant subscription
//     ready does not wake an idle worker: the publishing worker takes it
//     when its callback returns, on the same core, and wakes another worker
//     if it cannot.
//
// Publications are attributed to the owner's callback that runs while they
// are made; in a reentrant group where several callbacks of the owner
// publish at once, the one that finishes first takes the mute. Published
// outside a callback, a message is delivered as by the bus's Publisher.
type Publisher struct {
	o   *Owner
	pub *subscribers.Publisher
}

// Publisher returns a publisher on topic of bus for the owner's callbacks.
func (o *Owner) Publisher(bus *subscribers.Bus, topic string) (*Publisher, error) {
	p, err := bus.Publisher(topic)
	if err != nil {
		return nil, err
	}
	o.tracked.Store(true)
	return &Publisher{o: o, pub: p}, nil
}

// Topic returns the publisher's topic.
func (p *Publisher) Topic() string { return p.pub.Topic() }

// Publish publishes payload and returns how many subscriptions accepted it.
func (p *Publisher) Publish(payload []byte) int {
	return p.PublishMessage(subscribers.Message{Payload: payload})
}

// PublishMessage publishes m on the publisher's topic and returns how many
// subscriptions accepted it.
func (p *Publisher) PublishMessage(m subscribers.Message) int {
	inCallback := p.o.running.Load() > 0
	if !inCallback {
		return p.pub.PublishMessage(m)
	}
	return p.pub.Offer(m, !p.o.ex.opts.NoHandoff, func(s *subscribers.Subscription) {
		p.o.mutor.CompareAndSwap(nil, s)
	})
}

// mute mutes x, whose run published to the overloaded subscription s, until
// s drains (seed 002's PostRun): not if x is itself an overloaded
// subscription, or s is x, so that a cycle of publishers drains.
func (e *Executor) mute(x *waitset.Entity, en *entity, s *subscribers.Subscription) {
	if en.sub != nil && (en.sub == s || en.sub.Overloaded()) {
		return
	}
	s.MuteUntilDrained(x)
}
