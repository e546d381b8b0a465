package executor

import (
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/waitset"
	"github.com/robotexec/robotexec/subscribers"
)

// Publisher publishes through a router for the callbacks of an owner, with
// the executor's backpressure and hand-off where the router delivers to
// subscriptions of this process:
//
//   - Backpressure (muting, docs/design.md, Resources): a callback's
//     publication never waits and never drops for the Block policy; when it
//     leaves a subscription's queue at or above its threshold (Depth unless
//     set), the callback that published is muted when its run ends: it is
//     not scheduled (its triggers wait in the wait set) until that queue
//     drains below the threshold. A pipeline's memory stays bounded without
//     dropping data. A callback that is itself an overloaded subscription
//     is not muted, so that cycles drain.
//   - Hand-off (docs/design.md, Idle workers and hand-off): a publication
//     that makes a dormant subscription ready does not wake an idle worker:
//     the publishing worker takes it when its callback returns, on the same
//     core, and wakes another worker if it cannot.
//
// A publication is a callback's when it is made on the goroutine of a
// running callback (of any owner; the owner's publishers should be used by
// the owner's callbacks, to which the mute goes: in a reentrant group where
// several of them publish at once, the one that finishes first takes it).
// Any other publication, such as one from a goroutine that a callback
// started, is delivered as by the router's Publisher: it waits for room
// under the Block policy, never goes past a queue's depth and mutes no
// callback. So a callback that waits for a goroutine of its own that
// publishes into a full Block queue waits for that queue's consumer, which
// must be able to run meanwhile (on another worker, outside the callback's
// exclusive group and resources). A goroutine's publication made while one
// of the owner's callbacks runs may trigger a subscription quietly, as a
// hand-off: the subscription then runs when a worker next looks for work,
// at the latest when that callback returns, or at once if the goroutine
// finds a queue full or overloaded (a worker is woken then, for that
// publication's subscriptions and the rest of it).
type Publisher struct {
	o   *Owner
	pub *subscribers.Publisher
}

// Publisher returns a publisher on topic through router r for the owner's
// callbacks.
func (o *Owner) Publisher(r *subscribers.Router, topic string, opts ...subscribers.PublishOption) (*Publisher, error) {
	p, err := r.Publisher(topic, opts...)
	if err != nil {
		return nil, err
	}
	o.tracked.Store(true)
	return &Publisher{o: o, pub: p}, nil
}

// Topic returns the publisher's topic.
func (p *Publisher) Topic() string { return p.pub.Topic() }

// Publish publishes payload with the QoS and retain flag of the
// publisher's options: see PublishMessage.
func (p *Publisher) Publish(payload []byte) error {
	_, err := p.PublishMessage(p.pub.Message(payload))
	return err
}

// PublishMessage publishes m on the publisher's topic, with its QoS and
// retain flag, and returns how many subscriptions of this process accepted
// it and the error of the router's remote (see
// [subscribers.Publisher.PublishMessage]).
func (p *Publisher) PublishMessage(m subscribers.Message) (int, error) {
	// Quiet (a hand-off) only while a callback of the owner runs, whose
	// worker will look for the work when it returns. Whether the
	// publication is a callback's is asked even when none seems to run: a
	// callback that made the owner's first publisher began its run before
	// the owner counted its runs.
	quiet := !p.o.ex.opts.noHandoff && p.o.running.Load() > 0
	n, err := bus.FastOf(p.pub).Offer(m, quiet, p.fromCallback, func(s *subscribers.Subscription) {
		p.o.mutor.CompareAndSwap(nil, s)
	})
	if quiet && p.o.running.Load() == 0 {
		// The owner's callbacks all ended while the publication was
		// made (it came from another goroutine): no worker of theirs
		// is sure to look for it, so wake one. A worker decrements
		// running before it looks for work, so while running is
		// positive one will.
		p.o.ex.wake()
	}
	return n, err
}

// fromCallback reports whether a publication comes from a callback (see
// inCallback). One that does not, made while one of the owner's callbacks
// runs, comes from a goroutine that a callback started: it may have
// triggered a subscription quietly, leaving it to a worker busy with that
// callback, which may be waiting for the goroutine, so a worker is woken
// before the goroutine waits for room in a full queue. While none runs,
// its triggers were not quiet and woke one already.
func (p *Publisher) fromCallback() bool {
	if inCallback() {
		return true
	}
	if p.o.running.Load() > 0 {
		p.o.ex.wake()
	}
	return false
}

// mute mutes x, whose run published to the overloaded subscription s, until
// s drains (PostRun, docs/design.md, Resources): not if x is itself an
// overloaded subscription, or s is x, so that a cycle of publishers drains.
func (e *Executor) mute(x *waitset.Entity, en *entity, s *subscribers.Subscription) {
	if en.sub != nil && (en.sub == s || en.sub.Overloaded()) {
		return
	}
	bus.MuteUntilDrained(s, x)
}
