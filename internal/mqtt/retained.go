package mqtt

import "github.com/robotexec/robotexec/internal/bus"

// Keep publishes payload on topic, retained at QoS 1, to the broker only
// (bypassing the router's local deliveries), now or on the first
// connection, and again after every reconnection, so that a broker that
// lost it (restarted without persistence) has it again: robotexec keeps
// its graph topic so. An empty payload clears the retained message and
// stops keeping it. It fails as Publish does.
func (c *Client) Keep(topic string, payload []byte) error {
	c.mu.Lock()
	if c.kept == nil {
		c.kept = map[string][]byte{}
	}
	if len(payload) == 0 {
		delete(c.kept, topic)
	} else {
		c.kept[topic] = payload
	}
	c.mu.Unlock()
	return c.enqueue(outgoing{m: keptMessage(topic, payload)})
}

func keptMessage(topic string, payload []byte) bus.Message {
	return bus.Message{Topic: topic, Payload: payload, QoS: 1, Retained: true}
}

// republishKept publishes the kept messages again, after a reconnection.
func (c *Client) republishKept() {
	c.mu.Lock()
	msgs := make([]bus.Message, 0, len(c.kept))
	for t, p := range c.kept {
		msgs = append(msgs, keptMessage(t, p))
	}
	c.mu.Unlock()
	for _, m := range msgs {
		if err := c.enqueue(outgoing{m: m}); err != nil {
			c.log.Warn("mqtt: republish a kept message", "topic", m.Topic, "error", err)
		}
	}
}
