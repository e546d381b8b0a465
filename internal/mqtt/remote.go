package mqtt

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/facade"
	"github.com/robotexec/robotexec/subscribers"
)

// Router returns the client's router: the message path of the process
// (see [bus.Router]). Its publishers publish through the client,
// and what the client receives goes to the subscriptions attached to it.
func (c *Client) Router() *subscribers.Router { return facade.PublicRouter(c.router) }

// Attach attaches s to the client's router (see [bus.Router.Attach])
// at the client's QoS; see [Client.QoS] for another QoS. When the client is
// connected, Attach waits for the broker's answer (up to the connect
// timeout) and fails when the broker refuses the subscription; otherwise
// the subscription is made on connecting.
//
// A filter may be a shared subscription, $share/GROUP/FILTER: the broker
// gives each message of FILTER to one member of GROUP, and incoming
// messages are matched against FILTER.
func (c *Client) Attach(s *subscribers.Subscription) error { return c.router.Attach(facade.Sub(s)) }

// Detach stops delivering to s. With CleanSession, and for a shared
// subscription, the client also unsubscribes the filter at the broker when
// no other attached subscription uses it. With a persistent session (the
// default) the broker keeps a non-shared subscription, so that messages
// published while the process is away wait for it; messages of a filter
// that no subscription uses any more are acknowledged and counted as
// unrouted. A shared subscription leaves its group, so that the other
// members take its share.
func (c *Client) Detach(s *subscribers.Subscription) { c.router.Detach(facade.Sub(s)) }

// QoS returns a source that attaches subscriptions to the client with QoS
// q instead of the client's default.
func (c *Client) QoS(q byte) subscribers.Source { return c.Router().QoS(q) }

// remote is the client as its router's bus.Remote.
type remote Client

func (r *remote) Subscribe(w bus.WireFilter) error {
	return (*Client)(r).subscribeFilter(w)
}

func (r *remote) Unsubscribe(filter string) { (*Client)(r).unsubscribeFilter(filter) }

// Publish queues m for the connection (see outbound.go).
func (r *remote) Publish(m bus.Message) error {
	return (*Client)(r).enqueue(outgoing{m: m})
}

// subscribeFilter subscribes w at the broker now, if connected, and on
// every connection.
func (c *Client) subscribeFilter(w bus.WireFilter) error {
	unanswered, err := c.subscribeNow(w)
	if unanswered != nil {
		// A connection without the subscription would never get its
		// messages: end it, and the next one subscribes (as renew does).
		unanswered.close()
	}
	return err
}

// subscribeNow is subscribeFilter with c.subMu held; it returns the
// connection, still up, on which the SUBSCRIBE got no answer within the
// connect timeout or failed otherwise, for the caller to end.
func (c *Client) subscribeNow(w bus.WireFilter) (unanswered link, err error) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	c.wire[w.Filter] = &wireState{w: w}
	l := c.link
	c.mu.Unlock()
	if l == nil {
		return nil, nil // the next connection subscribes
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.ConnectTimeout)
	defer cancel()
	err = l.subscribe(ctx, w, true)
	var refused *RefusedError
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &refused):
		c.refusals.add(c.log, err)
		return nil, err
	case c.ctx.Err() != nil:
		return nil, ErrClosed
	case ended(l):
		// The connection went away meanwhile; the next one subscribes.
		return nil, nil
	}
	c.log.Warn("mqtt: subscribing failed, reconnecting", "broker", c.Broker(), "filter", w.Filter, "error", err)
	return l, nil
}

// unsubscribeFilter stops subscribing filter on connecting, and
// unsubscribes it at the broker with a clean session, or when it is a
// shared subscription's (leaving the group): through the feeder, in order
// with the publications, so that a publication made after it comes after
// it, and without waiting (Detach may run inside a callback).
func (c *Client) unsubscribeFilter(filter string) {
	c.mu.Lock()
	_, had := c.wire[filter]
	delete(c.wire, filter)
	send := had && c.link != nil && !c.closed.Load() && (c.cfg.CleanSession || bus.Shared(filter))
	c.mu.Unlock()
	if !send {
		return
	}
	o := &c.out
	o.mu.Lock()
	if !o.closed && o.link != nil {
		o.seq++ // in order with the publications, requeued ones too
		o.q = append(o.q, outgoing{unsubscribe: filter, seq: o.seq})
		o.n.Add(1)
	}
	o.mu.Unlock()
	o.signal()
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
		if bus.Shared(f) {
			filters = append(filters, f)
			delete(c.wire, f)
		}
	}
	l := c.link
	c.mu.Unlock()
	if len(filters) == 0 || l == nil {
		return nil
	}
	if err := l.unsubscribe(ctx, filters...); err != nil {
		return fmt.Errorf("mqtt: leave shared subscriptions: %w", err)
	}
	// The UNSUBACK was read after every PUBLISH that came before it on
	// that connection; those reach the intake through paho's goroutines.
	if err := c.drain(ctx, l, l.frames().publishes.Load()); err != nil {
		return fmt.Errorf("mqtt: leave shared subscriptions: %w", err)
	}
	return nil
}

// drain waits until the intake has handled n messages of the connection
// l, or l ends, or ctx ends.
func (c *Client) drain(ctx context.Context, l link, n uint64) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for l.frames().handled.Load() < n {
		select {
		case <-tick.C:
		case <-l.done():
			return nil // what it had not handed on, the broker sends again
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// PublishWait publishes m to the broker only, bypassing the router's
// local deliveries but in order with its publications, and waits until
// the broker acknowledged it (QoS 1 and 2) or it was written to the
// network (QoS 0), or ctx ends. It is for one-off publications (the pub
// command); nodes publish through the router's publishers. The broker's
// refusal is a *RefusedError that names the reason (MQTT 5).
//
// With MQTT 5 the outcome is the broker's answer, maybe on a later
// connection of the session. With MQTT 3.1.1 a QoS 1 or 2 publication
// whose connection is lost before the broker's acknowledgement fails with
// ErrUnconfirmed, and a broker that refuses a publication may close the
// connection or drop it silently.
func (c *Client) PublishWait(ctx context.Context, m subscribers.Message) error {
	result := make(chan error, 1)
	if err := c.enqueue(outgoing{m: *facade.BusMessage(&m), result: result}); err != nil {
		return err
	}
	select {
	case err := <-result:
		return err
	case <-ctx.Done():
		return fmt.Errorf("mqtt: publish %q: %w", m.Topic, ctx.Err())
	case <-c.ctx.Done():
		return wrapPublish(m.Topic, ErrClosed)
	}
}

// Publisher returns a publisher of the client's router on topic, which
// must be a valid topic name, as [subscribers.Router.Publisher] does: its
// Publish publishes with the client's QoS (Config.QoS) and no retain flag,
// unless opts say otherwise ([bus.WithQoS], [bus.WithRetain]).
func (c *Client) Publisher(topic string, opts ...bus.PublishOption) (*subscribers.Publisher, error) {
	opts = append([]bus.PublishOption{bus.WithQoS(c.cfg.QoS)}, opts...)
	p, err := c.router.Publisher(topic, opts...)
	if err != nil {
		return nil, fmt.Errorf("mqtt: %w", err)
	}
	return facade.PublicPublisher(p), nil
}
