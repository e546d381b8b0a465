package bus

// Fast is package executor's path for publishing from callbacks: a
// callback's publication never waits, reports the queues it leaves
// overloaded, and may leave the wake-up to the publishing worker. A publisher that
// does not run on an executor's worker needs none of it: Publish and
// PublishMessage are the path.
//
// Get a Fast with [FastOf]; it is a handle on the publisher, free to
// make and to copy. The zero Fast is not usable.
type Fast struct{ p *Publisher }

// FastOf returns the executor's path through p.
func FastOf(p *Publisher) Fast { return Fast{p} }

// Offer publishes m like [Publisher.PublishMessage], but, from a callback,
// never waits: where a local subscription's queue is full under the Block
// policy, it accepts m beyond the depth, and the executor mutes the publishing callback until the
// queue drains (backpressure, docs/design.md, Resources; see
// [MuteUntilDrained]); the drop policies drop as in Deliver. It
// calls overloaded for each local subscription it leaves at or above its
// threshold. quiet triggers dormant subscriptions without waking an idle
// worker, for a publishing worker that takes the work itself (hand-off).
//
// inCallback, unless nil, reports whether the publication comes from a
// callback that the executor runs, on the goroutine that runs it; Offer
// asks it only where the answer matters, at most once: at a full Block
// queue and at an overloaded one. A publication that does not (one from a
// goroutine that a callback started) waits for room as PublishMessage's
// does, calls overloaded for no queue, and, once known, triggers the
// subscriptions after it with a wake-up.
func (f Fast) Offer(m Message, quiet bool, inCallback func() bool, overloaded func(*Subscription)) (int, error) {
	p := f.p
	m.Topic = p.topic
	c := p.route()
	return p.r.publish(&m, c.subs, c.out, &offering{quiet: quiet, overloaded: overloaded, inCallback: inCallback})
}
