package bench

import (
	"errors"
	"fmt"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// rawClient is a bare paho client: messages handled on paho's goroutine in
// arrival order, and none of [mqtt.Client]'s intake, routing,
// acknowledgement control, status topic or reconnection handling. It is
// the baseline that the bridge workload measures the MQTT path against,
// and its load generator. It is safe for concurrent use.
type rawClient struct {
	pc      paho.Client
	timeout time.Duration
}

// dialRaw connects a rawClient to broker (a tcp:// URL) as clientID, with
// a clean or a persistent session (then with paho's ordered store, as
// mqtt.Client's), waiting at most timeout for the broker's answer, also for
// each later subscription.
func dialRaw(broker, clientID string, clean bool, timeout time.Duration) (*rawClient, error) {
	o := paho.NewClientOptions().AddBroker(broker).SetClientID(clientID).
		SetProtocolVersion(4).SetCleanSession(clean).SetOrderMatters(true).
		SetAutoReconnect(false)
	if !clean {
		o.SetStore(paho.NewOrderedMemoryStore())
	}
	c := &rawClient{pc: paho.NewClient(o), timeout: timeout}
	if err := c.wait(c.pc.Connect()); err != nil {
		return nil, fmt.Errorf("bench: raw client %s: connect to %s: %w", clientID, broker, err)
	}
	return c, nil
}

func (c *rawClient) wait(tok paho.Token) error {
	if !tok.WaitTimeout(c.timeout) {
		return errors.New("timed out")
	}
	return tok.Error()
}

// Publish sends payload to topic and returns without waiting for the
// broker, as [mqtt.Publisher.Publish] does.
func (c *rawClient) Publish(topic string, qos byte, payload []byte) {
	c.pc.Publish(topic, qos, false, payload)
}

// Subscribe subscribes to filter and calls h for each message, on paho's
// goroutine, in arrival order; h must not block for long.
func (c *rawClient) Subscribe(filter string, qos byte, h func(topic string, payload []byte)) error {
	err := c.wait(c.pc.Subscribe(filter, qos, func(_ paho.Client, m paho.Message) {
		h(m.Topic(), m.Payload())
	}))
	if err != nil {
		return fmt.Errorf("bench: raw client: subscribe %q: %w", filter, err)
	}
	return nil
}

// Forward makes the client a raw forwarder: the message handler of filter
// from republishes each message's payload to topic to, with QoS qos,
// directly, without waiting for the broker.
func (c *rawClient) Forward(from, to string, qos byte) error {
	err := c.wait(c.pc.Subscribe(from, qos, func(cl paho.Client, m paho.Message) {
		cl.Publish(to, qos, false, m.Payload())
	}))
	if err != nil {
		return fmt.Errorf("bench: raw forwarder: subscribe %q: %w", from, err)
	}
	return nil
}

// Close disconnects, letting paho send what it has for up to 100 ms.
func (c *rawClient) Close() { c.pc.Disconnect(100) }
