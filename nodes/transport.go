package nodes

import (
	"github.com/robotexec/robotexec/subscribers"
)

// Transport carries the messages of nodes.
type Transport interface {
	// Source returns the source that subscriptions with QoS qos attach to.
	Source(qos byte) subscribers.Source
	// Publisher returns a publisher on topic, which must be a valid topic
	// name.
	Publisher(topic string, qos byte, retain bool) (Sender, error)
}

// Sender publishes on one topic.
type Sender interface {
	// Publish publishes payload. It must not block on the executor, so
	// that callbacks may call it.
	Publish(payload []byte) error
}

// BusTransport carries messages over an in-process bus: QoS is carried in
// the message and retained messages are kept by the bus.
func BusTransport(bus *subscribers.Bus) Transport { return busTransport{bus} }

type busTransport struct{ bus *subscribers.Bus }

func (t busTransport) Source(byte) subscribers.Source { return t.bus }

func (t busTransport) Publisher(topic string, qos byte, retain bool) (Sender, error) {
	p, err := t.bus.Publisher(topic)
	if err != nil {
		return nil, err
	}
	return busSender{p: p, qos: qos, retain: retain}, nil
}

type busSender struct {
	p      *subscribers.Publisher
	qos    byte
	retain bool
}

func (s busSender) Publish(payload []byte) error {
	s.p.PublishMessage(subscribers.Message{Payload: payload, QoS: s.qos, Retained: s.retain})
	return nil
}
