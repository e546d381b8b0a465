// Package bus provides subscriptions with their own bounded message
// queues, the router that is a process's one message path, and
// publishers.
//
// A [Subscription] is a channel of work (docs/design.md, Order per
// subscription, in the repository): each accepted message is an item of work
// in its own FIFO queue, bounded by a depth and an explicit overflow
// [Policy] whose drops are counted. The subscription holds a wait set
// entity (package waitset): a delivery triggers it, and the executor runs
// its messages from the front, one callback at a time (a run serves one
// message or a short batch of them, see package executor's Options.Batch),
// so messages of one subscription never overtake each other and never run in
// parallel. In those terms a subscription is dormant (waiting with an empty
// queue), ready (in the wait set or a run queue) or in progress (running);
// at the end of a run a subscription with more work goes to the back of the
// ready queue.
//
// A [Source] delivers messages to the subscriptions attached to it. The
// [Router] is the source of a process: a publication through its
// [Publisher] reaches the matching subscriptions of the process directly
// and, through a [Remote] (the MQTT client of internal/mqtt), the broker
// for everyone else; what the remote receives goes to the subscriptions it
// was sent for, as the broker says with MQTT 5's subscription identifiers,
// and the broker is asked not to send the router's own publications back
// (No Local). Without a remote the router is an in-process bus, for tests and the dry
// run that checks a config. Topics are matched with MQTT filters ('+' for
// one level, '#' for the rest) by an [Index]; a shared subscription,
// $share/GROUP/FILTER, is matched by FILTER.
//
// Callbacks publish through a publisher's [Fast] path, package executor's
// own: it never waits on a full queue, reports overloaded queues for
// muting, and lets the publishing worker take the work it makes.
//
// # Concurrency
//
// Subscription, Router, Index and Publisher are safe for concurrent use.
// Payloads are shared, not copied, between the publisher and every
// subscriber: neither may modify a payload after publishing or receiving
// it.
package bus
