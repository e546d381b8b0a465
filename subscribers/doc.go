// Package subscribers is the message path of robotexec: the [Message] a
// subscription callback receives, the [Subscription] with its own bounded
// queue ([Options], overflow [Policy], [Stats], drop [Reason]s), and the
// [Router] with its [Publisher]s, the one path of a process's
// publications.
//
// Each subscription has its own bounded FIFO queue (docs/design.md, Order
// per subscription, in the repository): its messages run one callback at a
// time, in arrival order, never overlapping, and a full queue does what
// its policy says and counts what it drops. A publication through a router
// reaches the matching subscriptions of the process directly and, with
// robotexec run, the broker for everyone else. Topics are matched with MQTT
// filters ('+' for one level, '#' for the rest); a shared subscription,
// $share/GROUP/FILTER, is matched by FILTER.
//
// Publications take a context. Under a callback's run context (the context
// the executor passes to a callback), a publication is that callback's: it
// never waits for room, and a full block queue mutes the callback until
// the queue drains. Under any other context it waits for room in a full
// block queue until the context is done.
//
// A program that schedules callbacks itself makes subscriptions with
// [New], registers their [Subscription.Entity] with a wait set and takes
// their messages with [Subscription.Take] (package waitset has an
// example).
//
// Payloads are shared, not copied, between the publisher and every
// subscriber: neither may modify a payload after publishing or receiving
// it. Every type is safe for concurrent use.
package subscribers
