package mqtt

import (
	"context"
	"errors"
	"fmt"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/robotexec/robotexec/subscribers"
)

// Router returns the client's router: the message path of the process
// (see [subscribers.Router]). Its publishers publish through the client,
// and what the client receives goes to the subscriptions attached to it.
func (c *Client) Router() *subscribers.Router { return c.router }

// Attach attaches s to the client's router (see [subscribers.Router.Attach])
// at the client's QoS; see [Client.QoS] for another QoS. When the client is
// connected, Attach waits for the broker's answer (up to the connect
// timeout) and fails when the broker refuses the subscription; otherwise
// the subscription is made on connecting.
//
// A filter may be a shared subscription, $share/GROUP/FILTER: the broker
// gives each message of FILTER to one member of GROUP, and incoming
// messages are matched against FILTER.
func (c *Client) Attach(s *subscribers.Subscription) error { return c.router.Attach(s) }

// Detach stops delivering to s. With CleanSession, and for a shared
// subscription, the client also unsubscribes the filter at the broker when
// no other attached subscription uses it. With a persistent session (the
// default) the broker keeps a non-shared subscription, so that messages
// published while the process is away wait for it; messages of a filter
// that no subscription uses any more are acknowledged and counted as
// unrouted. A shared subscription leaves its group, so that the other
// members take its share.
func (c *Client) Detach(s *subscribers.Subscription) { c.router.Detach(s) }

// QoS returns a source that attaches subscriptions to the client with QoS
// q instead of the client's default.
func (c *Client) QoS(q byte) subscribers.Source { return c.router.QoS(q) }

// remote is the client as its router's subscribers.Remote.
type remote Client

func (r *remote) Subscribe(filter string, qos byte) error {
	return (*Client)(r).subscribeFilter(filter, qos)
}

func (r *remote) Unsubscribe(filter string) { (*Client)(r).unsubscribeFilter(filter) }

// Publish queues m for paho (see outbound.go).
func (r *remote) Publish(m subscribers.Message, sent subscribers.Sent) error {
	return (*Client)(r).enqueue(outgoing{m: m, sent: sent})
}

// subscribeFilter subscribes filter at the broker now, if connected, and on
// every connection.
func (c *Client) subscribeFilter(filter string, qos byte) error {
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return ErrClosed
	}
	c.wire[filter] = qos
	linkUp := c.linkUp
	c.mu.Unlock()
	if !linkUp {
		return nil // onConnect subscribes
	}
	err := c.subscribe(map[string]byte{filter: qos})
	switch {
	case err == nil, errors.Is(err, ErrClosed), errors.Is(err, ErrSubscriptionRefused):
		return err
	}
	// The connection went away meanwhile; onConnect subscribes again.
	c.log.Debug("mqtt: subscribe deferred to the next connection", "filter", filter, "error", err)
	return nil
}

// unsubscribeFilter stops subscribing filter on connecting, and
// unsubscribes it at the broker with a clean session, or when it is a
// shared subscription's (leaving the group).
func (c *Client) unsubscribeFilter(filter string) {
	c.mu.Lock()
	_, had := c.wire[filter]
	delete(c.wire, filter)
	send := had && c.linkUp && !c.closed.Load() && filter != c.cfg.StatusTopic &&
		(c.cfg.CleanSession || subscribers.Shared(filter))
	c.mu.Unlock()
	if send {
		// Not waited for: Detach may run inside a callback.
		c.pc.Unsubscribe(filter)
	}
}

// LeaveShared unsubscribes every shared subscription's filter at the
// broker and waits for the broker's answer, then until the messages
// received before it were handed to the subscriptions, or until ctx ends:
// the other members of the groups take the whole load from now on, and
// what the broker gave the client before is delivered, not left
// unacknowledged in its session. Call it before stopping, ahead of Pause.
func (c *Client) LeaveShared(ctx context.Context) error {
	c.mu.Lock()
	var filters []string
	for f := range c.wire {
		if subscribers.Shared(f) {
			filters = append(filters, f)
			delete(c.wire, f)
		}
	}
	linkUp := c.linkUp
	c.mu.Unlock()
	if len(filters) == 0 || !linkUp {
		return nil
	}
	tok := c.pc.Unsubscribe(filters...)
	select {
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			return fmt.Errorf("mqtt: leave shared subscriptions: %w", err)
		}
	case <-ctx.Done():
		return fmt.Errorf("mqtt: leave shared subscriptions: %w", ctx.Err())
	case <-c.stop:
		return ErrClosed
	}
	// paho completes the answer's token before the publications that
	// came just ahead of it have reached the intake: a drain mark, which
	// comes back after them, tells.
	if err := c.drain(ctx); err != nil {
		return fmt.Errorf("mqtt: leave shared subscriptions: %w", err)
	}
	return nil
}

// PublishWait publishes m to the broker only, bypassing the router's
// local deliveries but in order with its publications, and waits until
// the broker acknowledged it (QoS 1 and 2) or it was written to the
// network (QoS 0), or ctx ends. It is for one-off publications (the pub
// command); nodes publish through the router's publishers.
//
// A QoS 1 or 2 publication whose connection is lost before the broker's
// acknowledgement fails with ErrUnconfirmed as the client reconnects, even
// when it is resent with a persistent session: paho would complete its
// token, without error, on the next connection. A broker that refuses a
// publication from an MQTT 3.1.1 client closes the connection.
func (c *Client) PublishWait(ctx context.Context, m subscribers.Message) error {
	c.mu.Lock()
	epoch, lost := c.epoch, c.lost
	c.mu.Unlock()
	if m.QoS == 0 {
		lost = nil // its token completes once written
	}
	handed := make(chan handing, 1)
	if err := c.enqueue(outgoing{m: m, handed: handed}); err != nil {
		return err
	}
	var h handing
	select {
	case h = <-handed:
	case <-ctx.Done():
		return fmt.Errorf("mqtt: publish %q: %w", m.Topic, ctx.Err())
	case <-c.stop:
		return wrapPublish(m.Topic, ErrClosed)
	}
	if h.err != nil {
		return h.err
	}
	tok := h.tok
	select {
	case <-tok.Done():
		err := tok.Error()
		if err == nil && m.QoS > 0 && c.reconnectedSince(epoch) {
			err = ErrUnconfirmed
		}
		if err != nil {
			c.publishFailed.Add(1)
			return wrapPublish(m.Topic, err)
		}
		return nil
	case <-lost:
		c.publishFailed.Add(1)
		return wrapPublish(m.Topic, ErrUnconfirmed)
	case <-ctx.Done():
		return fmt.Errorf("mqtt: publish %q: %w", m.Topic, ctx.Err())
	case <-c.stop:
		return wrapPublish(m.Topic, ErrClosed)
	}
}

// reconnectedSince reports whether the client tried to reconnect since
// the connection epoch epoch.
func (c *Client) reconnectedSince(epoch uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch != epoch
}

// send hands *m to paho. It returns without waiting for the network or
// the broker, once paho's goroutines took it (after at most
// Config.WriteTimeout when the connection's writer is stuck). It fails
// only when it knows the message cannot go: the client is closed, it is
// not connected yet, or the message is QoS 0 while reconnecting (paho
// would report success and drop it). A QoS 1 or 2 message published while
// reconnecting waits in paho's ordered store and is sent after
// reconnecting.
//
// mosquitto 2.0.11 to at least 2.0.18 loses QoS 2 messages that a client
// publishes before its previous QoS 2 publication completed
// (eclipse-mosquitto/mosquitto#3056); with those brokers publish QoS 2
// with PublishWait, one at a time.
//
// Its caller counts the failures.
func (c *Client) send(m *subscribers.Message) (paho.Token, error) {
	switch {
	case m.QoS > 2:
		return nil, errBadQoS(*m)
	case c.closed.Load():
		return nil, wrapPublish(m.Topic, ErrClosed)
	case m.QoS == 0 && !c.pc.IsConnectionOpen():
		return nil, wrapPublish(m.Topic, ErrNotConnected)
	}
	c.published.Add(1)
	return c.pc.Publish(m.Topic, m.QoS, m.Retained, m.Payload), nil
}

func errBadQoS(m subscribers.Message) error {
	return fmt.Errorf("mqtt: publish %q: QoS %d is not 0, 1 or 2", m.Topic, m.QoS)
}

func wrapPublish(topic string, err error) error {
	if errors.Is(err, paho.ErrNotConnected) {
		err = ErrNotConnected
	}
	return fmt.Errorf("mqtt: publish %q: %w", topic, err)
}

// Publisher returns a publisher of the client's router on topic, which
// must be a valid topic name, whose Publish publishes with QoS qos and
// the retain flag retain.
func (c *Client) Publisher(topic string, qos byte, retain bool) (*subscribers.Publisher, error) {
	opts := []subscribers.PublishOption{subscribers.WithQoS(qos)}
	if retain {
		opts = append(opts, subscribers.WithRetain())
	}
	p, err := c.router.Publisher(topic, opts...)
	if err != nil {
		return nil, fmt.Errorf("mqtt: %w", err)
	}
	return p, nil
}
