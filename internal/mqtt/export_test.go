package mqtt

import (
	"context"
	"sync/atomic"

	"github.com/robotexec/robotexec/internal/bus"
)

// InjectedMessage is a message from the broker made by a test, as a
// connection hands it to the client, that counts its acknowledgements.
type InjectedMessage struct {
	TopicName   string
	Body        []byte
	QoSLevel    byte
	Dup, Retain bool
	// IDs are the subscription identifiers it carries.
	IDs  []uint32
	acks atomic.Int32
}

// Acks returns how many times the client acknowledged m.
func (m *InjectedMessage) Acks() int { return int(m.acks.Load()) }

// Inject hands m to the client's intake as a connection hands a message
// that arrived from the broker (FuzzIntake), without a broker.
func (c *Client) Inject(m *InjectedMessage) {
	c.onMessage(&inbound{
		msg:  bus.Message{Topic: m.TopicName, Payload: m.Body, QoS: m.QoSLevel, Retained: m.Retain},
		ids:  m.IDs,
		dup:  m.Dup,
		link: injected{m},
	})
}

// injected is the connection of an injected message: it counts its
// acknowledgements, and does nothing else.
type injected struct{ m *InjectedMessage }

func (i injected) publish(*outgoing) error { return errRequeue }
func (i injected) subscribe(context.Context, bus.WireFilter, bool) error {
	return nil
}
func (i injected) unsubscribe(context.Context, ...string) error { return nil }
func (i injected) ack(*inbound)                                 { i.m.acks.Add(1) }
func (i injected) flushAcks()                                   {}
func (i injected) hold()                                        {}
func (i injected) release()                                     {}
func (i injected) flushed(context.Context) bool                 { return true }
func (i injected) done() <-chan struct{}                        { return nil }
func (i injected) frames() *frameConn                           { return &frameConn{} }
func (i injected) err() error                                   { return nil }
func (i injected) close()                                       {}

// PendingQoS0 returns how many QoS 0 messages wait in the intake or are
// being handed over.
func (c *Client) PendingQoS0() int { return int(c.in.qos0.Load()) }
