package mqtt

import (
	"context"

	"github.com/robotexec/robotexec/internal/bus"
)

// link is one connection to the broker that the broker accepted, of
// either protocol, until it ends: the client makes a new one after each
// loss (see connection.go). Its methods are safe for concurrent use; they
// fail once it has ended.
type link interface {
	// publish hands g to the connection, in order with the others, and
	// reports whether it took it. For QoS 0 that is the outcome; for QoS
	// 1 and 2 the client's settled is told the broker's answer later,
	// maybe on a later connection of the same session. errRequeue says
	// that the connection ended first and g may go on the next one.
	publish(g *outgoing) error
	// subscribe subscribes w, asking for the filter's retained messages
	// when retained (MQTT 3.1.1 brokers always send them). A refusal is a
	// *RefusedError.
	subscribe(ctx context.Context, w bus.WireFilter, retained bool) error
	// unsubscribe unsubscribes filters and waits for the broker's answer.
	unsubscribe(ctx context.Context, filters ...string) error
	// ack acknowledges it, a message received on this connection, once it
	// was handed over (QoS 1 and 2); the acknowledgement may wait for
	// flushAcks, to go with the next ones. An acknowledgement that comes
	// after the connection ended is dropped: the broker sends the message
	// again on the next connection of a persistent session. Only the
	// intake acknowledges.
	ack(it *inbound)
	// flushAcks sends the acknowledgements that wait.
	flushAcks()
	// hold makes the publications of the caller, until release, go to the
	// network together; only the feeder holds.
	hold()
	release()
	// flushed waits until the broker acknowledged every QoS 1 and 2
	// publication handed over, or ctx ends, and reports which.
	flushed(ctx context.Context) bool
	// frames returns the connection's frames, which count the messages
	// received and handled on it.
	frames() *frameConn
	// done is closed when the connection ended.
	done() <-chan struct{}
	// err is why it ended, once done is closed.
	err() error
	// close disconnects (DISCONNECT, so that the broker does not publish
	// the will) and waits for the connection's goroutines.
	close()
}

// A connection attempt's result: a link, or an error that says why not.
type connected struct {
	l              link
	sessionPresent bool
	maxPacket      int // the broker's Maximum Packet Size; 0: none said
	resent         int // unacknowledged publications that go again: the broker had no session
}
