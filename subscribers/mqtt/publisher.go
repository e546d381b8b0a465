package mqtt

import (
	"context"
	"errors"
	"fmt"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/robotexec/robotexec/subscribers"
)

// Publisher publishes to one topic through a client, with a fixed QoS and
// retain flag. It is safe for concurrent use.
type Publisher struct {
	c      *Client
	topic  string
	qos    byte
	retain bool
}

// Publisher returns a publisher on topic, which must be a valid topic name
// (no wildcards).
func (c *Client) Publisher(topic string, qos byte, retain bool) (*Publisher, error) {
	if err := subscribers.ValidateTopic(topic); err != nil {
		return nil, fmt.Errorf("mqtt: %w", err)
	}
	if qos > 2 {
		return nil, fmt.Errorf("mqtt: publisher %q: QoS %d is not 0, 1 or 2", topic, qos)
	}
	return &Publisher{c: c, topic: topic, qos: qos, retain: retain}, nil
}

// Topic returns the publisher's topic.
func (p *Publisher) Topic() string { return p.topic }

// Publish sends payload and returns without waiting for the network or the
// broker, so it is safe in executor callbacks: it returns once paho has
// taken the message, at once unless the connection's writer is stuck (then
// after at most Config.WriteTimeout). It fails only when it knows the
// message cannot go: the client is closed, it is not connected yet, or the
// message is QoS 0 while reconnecting. A QoS 1 or 2 message published
// while reconnecting waits in paho's ordered store and is sent after
// reconnecting. The payload must not be modified afterwards.
//
// mosquitto 2.0.11 to at least 2.0.18 loses QoS 2 messages that a client
// publishes before its previous QoS 2 publication completed
// (eclipse-mosquitto/mosquitto#3056); with those brokers publish QoS 2
// with PublishContext, one at a time.
func (p *Publisher) Publish(payload []byte) error {
	tok, err := p.send(payload)
	if err != nil {
		return err
	}
	select {
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			p.c.publishFailed.Add(1)
			return p.wrap(err)
		}
	default:
	}
	return nil
}

// PublishContext sends payload like Publish and then waits until the
// broker acknowledged it (QoS 1 and 2) or it was written to the network
// (QoS 0), or ctx ends. Inside an executor callback it cannot deadlock
// (nothing paho waits for runs on the executor), but it holds a worker
// for a network round trip, or for as long as a reconnection takes.
func (p *Publisher) PublishContext(ctx context.Context, payload []byte) error {
	tok, err := p.send(payload)
	if err != nil {
		return err
	}
	select {
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			p.c.publishFailed.Add(1)
			return p.wrap(err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mqtt: publish %q: %w", p.topic, ctx.Err())
	case <-p.c.stop:
		return p.wrap(ErrClosed)
	}
}

func (p *Publisher) send(payload []byte) (paho.Token, error) {
	c := p.c
	switch {
	case c.closed.Load():
		c.publishFailed.Add(1)
		return nil, p.wrap(ErrClosed)
	case p.qos == 0 && !c.pc.IsConnectionOpen():
		// paho would report success and drop it.
		c.publishFailed.Add(1)
		return nil, p.wrap(ErrNotConnected)
	}
	c.published.Add(1)
	return c.pc.Publish(p.topic, p.qos, p.retain, payload), nil
}

func (p *Publisher) wrap(err error) error {
	if errors.Is(err, paho.ErrNotConnected) {
		err = ErrNotConnected
	}
	return fmt.Errorf("mqtt: publish %q: %w", p.topic, err)
}

// String describes the publisher.
func (p *Publisher) String() string {
	return fmt.Sprintf("mqtt publisher(%s, qos %d, retain %v)", p.topic, p.qos, p.retain)
}
