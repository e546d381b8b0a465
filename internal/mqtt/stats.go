package mqtt

import "github.com/robotexec/robotexec/subscribers"

// Stats counts what a client did since Dial.
type Stats struct {
	// Connected is Connected().
	Connected bool
	// Broker is the URL of the broker the client is connected to,
	// without credentials, or "" between connections.
	Broker string
	// Connects counts successful connections, the first included;
	// Reconnects those after the first (robotexec_mqtt_reconnects_total).
	Connects, Reconnects uint64
	// ConnectionLosses counts connections lost without Close.
	ConnectionLosses uint64
	// ConnectFailures counts failed connection attempts.
	ConnectFailures uint64
	// SessionsLost counts the reconnections of a persistent session
	// (Config.CleanSession false) to a broker that did not have the
	// session (Session Present 0): a restarted broker without
	// persistence, an expired session, or another node of a cluster
	// that does not share sessions. What the client's subscriptions
	// would have received meanwhile is missed; its unacknowledged
	// publications were sent again.
	SessionsLost uint64
	// Received counts messages from the broker; Redelivered those among
	// them that the broker marked as possibly sent before (DUP).
	Received, Redelivered uint64
	// Delivered counts messages that at least one subscription accepted;
	// Unrouted those that matched no attached subscription.
	Delivered, Unrouted uint64
	// Dropped counts messages the client dropped before any subscription
	// queue, by reason: TooLarge (over MaxPayload), QueueFull (QoS 0 over
	// MaxPendingQoS0), each also counted on the subscriptions it was
	// meant for, and Unrouted (Unrouted again). Drops by a subscription's
	// overflow policy are counted by the subscription only.
	Dropped map[subscribers.Reason]uint64
	// Pending is the number of received messages not yet handed over;
	// Outbound the number of publications not yet handed to the
	// connection (queued, or being handed).
	Pending, Outbound int
	// Braked counts the times the intake stopped while more than 1,024
	// publications waited for the broker (see brake.go): the broker held
	// the messages back meanwhile.
	Braked uint64
	// OverSent counts the QoS 1 and 2 messages that found more of them
	// waiting in the intake than the Receive Maximum lets the broker send
	// (see brake.go): the connection's reader waited before it took more.
	OverSent uint64
	// Published counts publications handed to the connection;
	// PublishFailed those that failed: refused at once (not connected,
	// closed, too many waiting, too large, forbidden), refused by the
	// broker (see Refused), or dropped by Close. Failures after Publish
	// returned are logged, at most once every 10 s, refusals once per
	// topic and reason a minute.
	Published, PublishFailed uint64
	// Refused counts the broker's refusals, of publications and
	// subscriptions, by reason (MQTT 5).
	Refused map[Reason]uint64
}

// Stats returns the client's counters.
func (c *Client) Stats() Stats {
	broker := ""
	if _, ep := c.currentBroker(); ep != nil && c.Connected() {
		broker = ep.display
	}
	return Stats{
		Connected:        c.Connected(),
		Broker:           broker,
		SessionsLost:     c.sessionsLost.Load(),
		Connects:         c.connects.Load(),
		Reconnects:       c.reconnects.Load(),
		ConnectionLosses: c.losses.Load(),
		ConnectFailures:  c.counters.failures.Load(),
		Received:         c.received.Load(),
		Redelivered:      c.redelivered.Load(),
		Delivered:        c.delivered.Load(),
		Unrouted:         c.unrtd.Load(),
		Dropped: map[subscribers.Reason]uint64{
			subscribers.TooLarge:  c.tooLarge.Load(),
			subscribers.QueueFull: c.pendingFull.Load(),
			subscribers.Unrouted:  c.unrtd.Load(),
		},
		Pending:       c.in.len(),
		Outbound:      c.out.len(),
		Braked:        c.braked.Load(),
		OverSent:      c.overSent.Load(),
		Published:     c.published.Load(),
		PublishFailed: c.publishFailed.Load() + c.router.TooLarge(),
		Refused:       c.refusals.counts(),
	}
}
