package mqtt

import "sync/atomic"

// InjectedMessage is a message from the broker made by a test: a
// paho.Message that counts its acknowledgements.
type InjectedMessage struct {
	TopicName   string
	Body        []byte
	QoSLevel    byte
	Dup, Retain bool
	acks        atomic.Int32
}

// Duplicate returns m.Dup.
func (m *InjectedMessage) Duplicate() bool { return m.Dup }

// Qos returns m.QoSLevel.
func (m *InjectedMessage) Qos() byte { return m.QoSLevel }

// Retained returns m.Retain.
func (m *InjectedMessage) Retained() bool { return m.Retain }

// Topic returns m.TopicName.
func (m *InjectedMessage) Topic() string { return m.TopicName }

// MessageID returns 1: the client does not look at it.
func (m *InjectedMessage) MessageID() uint16 { return 1 }

// Payload returns m.Body.
func (m *InjectedMessage) Payload() []byte { return m.Body }

// Ack counts an acknowledgement.
func (m *InjectedMessage) Ack() { m.acks.Add(1) }

// Acks returns how many times the client acknowledged m.
func (m *InjectedMessage) Acks() int { return int(m.acks.Load()) }

// Inject hands m to the client's intake as paho's router hands a message
// that arrived from the broker (FuzzIntake), without a broker.
func (c *Client) Inject(m *InjectedMessage) { c.onMessage(nil, m) }

// BeforeResume makes the client call f each time paho lists its store to
// resume a session (right after connecting), before it does.
func BeforeResume(cfg *Config, f func()) { cfg.beforeResume = f }
