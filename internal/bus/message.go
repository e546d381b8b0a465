package bus

import (
	"fmt"
	"time"
)

// Message is one message on a topic.
type Message struct {
	Topic    string
	Payload  []byte
	QoS      byte
	Retained bool
	// Received is when the message reached this process.
	Received time.Time
	// The padding makes a Message 80 bytes, five 16-byte moves: a
	// 72-byte copy ends with a move that overlaps the one before it, and
	// a copy of such a copy, made at once (a message handed on by value,
	// then queued), cannot take the overlapped bytes from the stores
	// still pending, and waits for them (store-to-load forwarding
	// fails): about 8 ns of BenchmarkDispatch/executor's 47 a message.
	_ [8]byte
}

// Policy says what a full subscription queue does with a new message.
type Policy uint8

const (
	// DropOldest drops the oldest queued message to make room (ROS's
	// KEEP_LAST). It is the default.
	DropOldest Policy = iota
	// DropNewest refuses the new message.
	DropNewest
	// Block makes the producer wait until there is room or the
	// subscription closes.
	Block
)

// String returns the policy's config name: drop_oldest, drop_newest, block.
func (p Policy) String() string {
	switch p {
	case DropOldest:
		return "drop_oldest"
	case DropNewest:
		return "drop_newest"
	case Block:
		return "block"
	}
	return fmt.Sprintf("Policy(%d)", p)
}

// ParsePolicy parses a policy's config name.
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "drop_oldest", "":
		return DropOldest, nil
	case "drop_newest":
		return DropNewest, nil
	case "block":
		return Block, nil
	}
	return 0, fmt.Errorf("subscribers: overflow %q is not drop_oldest, drop_newest or block", s)
}

// Reason says why a message was dropped; it is the reason label of the
// robotexec_messages_dropped_total metric.
type Reason uint8

const (
	// QueueFull: the subscription's queue was full (drop_oldest or
	// drop_newest).
	QueueFull Reason = iota
	// Closed: the subscription was closed (at shutdown) before the message
	// was accepted.
	Closed
	// TooLarge: the payload was over the size limit.
	TooLarge
	// Malformed: the payload did not decode.
	Malformed
	// RateLimited: the message came faster than a configured rate.
	RateLimited
	// Invalid: the payload failed a content check.
	Invalid
	// Unrouted: a message received from the broker matched no attached
	// subscription (one detached while the broker kept its filter, for
	// example).
	Unrouted
	// Evicted: a node's per-topic table was full (max_topics), so the
	// state of its least recently seen topic was forgotten to make room
	// for the topic of this message, which was handled. Counted on the
	// subscription the message came through.
	Evicted
	numReasons

	// NumReasons is the number of Reasons.
	NumReasons = numReasons
)

// Reasons lists every Reason, in order.
var Reasons = []Reason{QueueFull, Closed, TooLarge, Malformed, RateLimited, Invalid, Unrouted, Evicted}

// String returns the reason's label.
func (r Reason) String() string {
	switch r {
	case QueueFull:
		return "queue_full"
	case Closed:
		return "closed"
	case TooLarge:
		return "too_large"
	case Malformed:
		return "malformed"
	case RateLimited:
		return "rate_limited"
	case Invalid:
		return "invalid"
	case Unrouted:
		return "unrouted"
	case Evicted:
		return "evicted"
	}
	return fmt.Sprintf("Reason(%d)", r)
}
