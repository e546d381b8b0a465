// Package subscribers holds what node authors and programs embedding the
// executor use of the message bus: the [Message] a subscription callback
// receives, the [Subscription] that Node.Subscribe and Owner.Subscribe
// return with its queue's [Options], overflow [Policy] and [Stats], the
// [Reason]s a message is dropped for, and the [Router] with its
// [Publisher]s, the process's one message path.
//
// Each subscription has its own bounded FIFO queue (docs/design.md, Order
// per subscription, in the repository): its messages run one callback at
// a time, in arrival order, never overlapping, and a full queue does what
// its policy says and counts what it drops. A publication through a
// router reaches the matching subscriptions of the process directly and,
// with robotexec run, the broker for everyone else. Topics are matched
// with MQTT filters ('+' for one level, '#' for the rest); a shared
// subscription, $share/GROUP/FILTER, is matched by FILTER.
//
// The router, the subscriptions' queues and the MQTT plumbing between
// them are robotexec's own (internal/bus in the repository); the types
// here are theirs under their public names. Payloads are shared, not
// copied, between the publisher and every subscriber: neither may modify
// a payload after publishing or receiving it.
package subscribers

import "github.com/robotexec/robotexec/internal/bus"

// Message is one message on a topic: Topic, Payload, QoS, Retained, and
// Received, when it reached this process: when it was published, for a
// message published in it (zero only for one given straight to
// Subscription.Deliver).
type Message = bus.Message

// Subscription is a callback's subscription with its own bounded queue.
// Filter, Options, Stats, Len, Overloaded and Shared describe it; Close
// ends it (the executor closes every subscription when it stops);
// Deliver puts a message into its queue as a source does, and Drop(r)
// counts a message that a callback dropped for reason r (Malformed, for
// one). ID is the callback's ID (executor.Run.ID); Closed reports Close;
// a Source's Attach calls Attach.
type Subscription = bus.Subscription

// Options are a subscription's queue settings: Depth (0 means
// DefaultDepth), Overflow (the zero value is DropOldest), and Threshold
// (0 means Depth), the queue length at which a callback publishing into
// the subscription is muted after its run until the queue drains below
// it.
type Options = bus.Options

// DefaultDepth is the queue depth of a subscription whose Options.Depth
// is 0.
const DefaultDepth = bus.DefaultDepth

// Policy says what a full subscription queue does with a new message.
type Policy = bus.Policy

const (
	// DropOldest drops the oldest queued message to make room (ROS's
	// KEEP_LAST). It is the default.
	DropOldest = bus.DropOldest
	// DropNewest refuses the new message.
	DropNewest = bus.DropNewest
	// Block makes the producer wait until there is room or the
	// subscription closes; a callback's publication instead mutes the
	// callback until the queue drains (package executor).
	Block = bus.Block
)

// ParsePolicy parses a policy's config name: drop_oldest, drop_newest or
// block.
func ParsePolicy(s string) (Policy, error) { return bus.ParsePolicy(s) }

// Stats counts what a subscription accepted and dropped, by Reason
// (Dropped[QueueFull], ...), and how many messages are queued;
// DroppedTotal sums the drops.
type Stats = bus.Stats

// Reason says why a message was dropped; String gives its metric label.
type Reason = bus.Reason

const (
	// QueueFull: the subscription's queue was full (drop_oldest or
	// drop_newest).
	QueueFull = bus.QueueFull
	// Closed: the subscription was closed (at shutdown) before the message
	// was accepted.
	Closed = bus.Closed
	// TooLarge: the payload was over the size limit.
	TooLarge = bus.TooLarge
	// Malformed: the payload did not decode.
	Malformed = bus.Malformed
	// RateLimited: the message came faster than a configured rate.
	RateLimited = bus.RateLimited
	// Invalid: the payload failed a content check.
	Invalid = bus.Invalid
	// Unrouted: a message received from the broker matched no attached
	// subscription.
	Unrouted = bus.Unrouted
	// Evicted: a node's per-topic table was full (max_topics), so the
	// state of its least recently seen topic was forgotten to make room.
	Evicted = bus.Evicted
)

// ErrTooLarge is returned for a publication whose payload is over the
// router's MaxPayload.
var ErrTooLarge = bus.ErrTooLarge

// Source delivers messages to the subscriptions attached to it; a Router
// is one.
type Source = bus.Source

// Router is a process's one message path: Publish and Publisher send
// messages to the matching subscriptions attached to it (Attach, Detach)
// and, with robotexec run, to the broker. Its zero value, or
// NewRouter(RouterOptions{InProcess: true}), is an in-process bus;
// TooLarge counts the publications refused for their size, and QoS gives
// a Source that subscribes at another MQTT QoS.
type Router = bus.Router

// RouterOptions configure a Router: InProcess delivers publications to
// the process's own subscriptions directly (without a remote, always);
// QoS is the QoS of subscriptions attached with Attach; MaxPayload, when
// positive, refuses larger payloads with ErrTooLarge. Remote (the MQTT
// broker) and Audience are robotexec run's: leave them nil.
type RouterOptions = bus.RouterOptions

// NewRouter returns a router.
func NewRouter(opts RouterOptions) *Router { return bus.NewRouter(opts) }

// Publisher publishes on one topic through a router, from any goroutine:
// a publication into a full block queue waits for room. Callbacks publish
// through executor.Publisher or nodes.Publisher instead, which never
// wait. Publish and PublishMessage publish, Message builds the message
// Publish would send, and Topic and String describe it.
type Publisher = bus.Publisher

// PublishOption adjusts a Publisher.
type PublishOption = bus.PublishOption

// WithQoS sets a publisher's MQTT QoS (default: the router's).
func WithQoS(q byte) PublishOption { return bus.WithQoS(q) }

// WithRetain makes a publisher's messages retained.
func WithRetain() PublishOption { return bus.WithRetain() }

// Match reports whether topic matches the MQTT topic filter. No filter,
// not even "#", matches the empty topic, which is not a topic name.
func Match(filter, topic string) bool { return bus.Match(filter, topic) }

// ValidateFilter reports why filter is not a valid MQTT topic filter, or
// nil.
func ValidateFilter(filter string) error { return bus.ValidateFilter(filter) }

// ValidateTopic reports why topic is not a valid MQTT topic name to
// publish on (it has wildcards, for one), or nil.
func ValidateTopic(topic string) error { return bus.ValidateTopic(topic) }
