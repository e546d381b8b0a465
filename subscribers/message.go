package subscribers

import (
	"time"
	"unsafe"

	"github.com/robotexec/robotexec/internal/bus"
)

// Message is one message on a topic.
type Message struct {
	Topic    string
	Payload  []byte
	QoS      byte
	Retained bool
	// Received is when the message reached this process: when it was
	// published, for a message published in it (zero only for one given
	// straight to Subscription.Deliver).
	Received time.Time
	_        [8]byte // see the internal message's
}

// busMessage returns the internal message that m is: the two types have
// one layout (the facade's TestLayouts).
func busMessage(m *Message) *bus.Message { return (*bus.Message)(unsafe.Pointer(m)) }

// DefaultDepth is the queue depth of a subscription whose Options.Depth
// is 0, and the default of config's executor.queue_depth.
const DefaultDepth = bus.DefaultDepth

// Options are a subscription's queue settings.
type Options struct {
	// Depth is the number of messages the queue holds (the QoS depth);
	// 0 means DefaultDepth.
	Depth int
	// Overflow is what a full queue does; the zero value is DropOldest.
	Overflow Policy
	// Threshold is the queue length at which a callback publishing into
	// the subscription is muted after its run until the queue drains
	// below it. 0 means Depth.
	Threshold int
}

func (o Options) bus() bus.Options {
	return bus.Options{Depth: o.Depth, Overflow: bus.Policy(o.Overflow), Threshold: o.Threshold}
}

// Policy says what a full subscription queue does with a new message.
type Policy uint8

const (
	// DropOldest drops the oldest queued message to make room (ROS's
	// KEEP_LAST). It is the default.
	DropOldest = Policy(bus.DropOldest)
	// DropNewest refuses the new message.
	DropNewest = Policy(bus.DropNewest)
	// Block makes the producer wait until there is room or the
	// subscription closes; a callback's publication instead mutes the
	// callback until the queue drains.
	Block = Policy(bus.Block)
)

// String returns the policy's config name: drop_oldest, drop_newest or
// block.
func (p Policy) String() string { return bus.Policy(p).String() }

// UnmarshalText parses a policy's config name, so that a config field of
// type Policy reads drop_oldest, drop_newest or block.
func (p *Policy) UnmarshalText(text []byte) error {
	q, err := bus.ParsePolicy(string(text))
	*p = Policy(q)
	return err
}

// Stats counts what a subscription accepted and dropped.
type Stats struct {
	// Accepted counts the messages the queue took.
	Accepted uint64
	// Dropped counts drops by Reason: Dropped[QueueFull], ...
	Dropped [bus.NumReasons]uint64
	// Queued is the number of messages in the queue now.
	Queued int
}

// DroppedTotal returns the number of drops for every reason.
func (s Stats) DroppedTotal() uint64 { return bus.Stats(s).DroppedTotal() }

// Reason says why a message was dropped; String gives its metric label.
type Reason uint8

const (
	// QueueFull: the subscription's queue was full (drop_oldest or
	// drop_newest).
	QueueFull = Reason(bus.QueueFull)
	// Closed: the subscription was closed (at shutdown) before the message
	// was accepted.
	Closed = Reason(bus.Closed)
	// TooLarge: the payload was over the size limit.
	TooLarge = Reason(bus.TooLarge)
	// Malformed: the payload did not decode.
	Malformed = Reason(bus.Malformed)
	// RateLimited: the message came faster than a configured rate.
	RateLimited = Reason(bus.RateLimited)
	// Invalid: the payload failed a content check.
	Invalid = Reason(bus.Invalid)
	// Unrouted: a message received from the broker matched no attached
	// subscription.
	Unrouted = Reason(bus.Unrouted)
	// Evicted: a node's per-topic table was full (max_topics), so the
	// state of its least recently seen topic was forgotten to make room.
	Evicted = Reason(bus.Evicted)
)

// String returns the reason's metric label (queue_full, closed, ...).
func (r Reason) String() string { return bus.Reason(r).String() }

// ErrTooLarge is returned for a publication whose payload is over the
// router's MaxPayload.
var ErrTooLarge = bus.ErrTooLarge

// Match reports whether topic matches the MQTT topic filter. No filter
// matches the empty topic, which MQTT does not allow as a topic name.
func Match(filter, topic string) bool { return bus.Match(filter, topic) }

// ValidateFilter reports why filter is not a valid MQTT topic filter, or
// nil.
func ValidateFilter(filter string) error { return bus.ValidateFilter(filter) }

// ValidateTopic reports why topic is not a valid MQTT topic name to
// publish on (it has wildcards, for one), or nil.
func ValidateTopic(topic string) error { return bus.ValidateTopic(topic) }
