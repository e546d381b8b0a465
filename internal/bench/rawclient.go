package mqtt

import (
	"errors"
	"fmt"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// RawClient is a bare paho client: messages handled on paho's goroutine in
// arrival order, and none of [Client]'s intake,
// routing, acknowledgement control, status topic or reconnection handling.
// It is the baseline that `robotexec bench` measures the MQTT path
// against, and its load generator; applications use Client. It is safe
// for concurrent use.
type RawClient struct {
	pc      paho.Client
	timeout time.Duration
}

// DialRaw connects a RawClient to broker (a tcp:// URL) as clientID, with
// a clean or a persistent session (then with paho's ordered store, as
// Client's), waiting at most timeout for the broker's answer, also for
// each later subscription.
func DialRaw(broker, clientID string, clean bool, timeout time.Duration) (*RawClient, error) {
	o := paho.NewClientOptions().AddBroker(broker).SetClientID(clientID).
		SetProtocolVersion(4).SetCleanSession(clean).SetOrderMatters(true).
		SetAutoReconnect(false)
	if !clean {
		o.SetStore(paho.NewOrderedMemoryStore())
	}
	c := &RawClient{pc: paho.NewClient(o), timeout: timeout}
	if err := c.wait(c.pc.Connect()); err != nil {
		return nil, fmt.Errorf("mqtt: raw client %s: connect to %s: %w", clientID, broker, err)
	}
	return c, nil
}

func (c *RawClient) wait(tok paho.Token) error {
	if !tok.WaitTimeout(c.timeout) {
		return errors.New("timed out")
	}
	return tok.Error()
}

// Publish sends payload to topic and returns without waiting for the
// broker, as [Publisher.Publish] does.
func (c *RawClient) Publish(topic string, qos byte, payload []byte) {
	c.pc.Publish(topic, qos, false, payload)
}

// Subscribe subscribes to filter and calls h for each message, on paho's
// goroutine, in arrival order; h must not block for long.
func (c *RawClient) Subscribe(filter string, qos byte, h func(topic string, payload []byte)) error {
	err := c.wait(c.pc.Subscribe(filter, qos, func(_ paho.Client, m paho.Message) {
		h(m.Topic(), m.Payload())
	}))
	if err != nil {
		return fmt.Errorf("mqtt: raw client: subscribe %q: %w", filter, err)
	}
	return nil
}

// Forward makes the client a raw forwarder: the message handler of filter
// from republishes each message's payload to topic to, with QoS qos,
// directly, without waiting for the broker.
func (c *RawClient) Forward(from, to string, qos byte) error {
	err := c.wait(c.pc.Subscribe(from, qos, func(cl paho.Client, m paho.Message) {
		cl.Publish(to, qos, false, m.Payload())
	}))
	if err != nil {
		return fmt.Errorf("mqtt: raw forwarder: subscribe %q: %w", from, err)
	}
	return nil
}

// Close disconnects, letting paho send what it has for up to 100 ms.
func (c *RawClient) Close() { c.pc.Disconnect(100) }
