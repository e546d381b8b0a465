package mqtt

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/robotexec/robotexec/subscribers"
)

// The intake decouples paho from the subscriptions. paho calls onMessage
// from its single router goroutine; if that goroutine blocked, paho would
// stop reading the connection, PINGRESP included, and drop it after the
// keep-alive (paho issues #427, #453). So onMessage only appends the
// message to a FIFO and returns. One intake goroutine hands the messages to
// the matching subscriptions in arrival order, where each subscription's
// overflow policy applies; with the Block policy it waits there, which
// stalls the intake only, never paho. (Handing a message over directly
// from onMessage when that cannot block saved a goroutine hand-off but
// made no measurable difference in BenchmarkBridge, so it went.)
//
// QoS 1 and 2 messages are acknowledged (PUBACK, PUBREC) only after they
// were handed over, in arrival order as MQTT requires. A stalled intake
// therefore stops acknowledging, and the broker's in-flight window
// (mosquitto: max_inflight_messages, 20 by default) stops sending: the
// backlog waits at the broker, not in this process. QoS 0 messages have no
// such brake, so at most MaxPendingQoS0 of them wait; newer ones are
// dropped and counted.

// inbound is a received message waiting in the intake.
type inbound struct {
	msg      subscribers.Message
	ack      paho.Message // QoS 1 and 2: acknowledged once handed over
	tooLarge bool
}

type intake struct {
	mu     sync.Mutex
	q      []inbound
	busy   bool          // the intake goroutine is handing a batch over
	paused atomic.Bool   // Pause: hold messages, neither deliver nor ack
	wake   chan struct{} // buffered: a pending wake-up
	qos0   atomic.Int64  // QoS 0 messages in q or being handed over
	n      atomic.Int64  // all messages in q or being handed over
}

func (in *intake) init() { in.wake = make(chan struct{}, 1) }

func (in *intake) len() int { return int(in.n.Load()) }

// onMessage is paho's message handler. It never blocks: it stamps the
// arrival time and appends the message to the intake.
func (c *Client) onMessage(_ paho.Client, pm paho.Message) {
	now := time.Now()
	c.received.Add(1)
	if pm.Duplicate() {
		c.redelivered.Add(1)
	}
	it := inbound{msg: subscribers.Message{
		Topic:    pm.Topic(),
		Payload:  pm.Payload(),
		QoS:      pm.Qos(),
		Retained: pm.Retained(),
		Received: now,
	}}
	if it.msg.QoS > 0 {
		it.ack = pm
	}
	if st := c.cfg.StatusTopic; st != "" && it.msg.Topic == st && string(it.msg.Payload) == StatusOffline {
		c.reassertOnline()
	}
	if c.cfg.MaxPayload >= 0 && len(it.msg.Payload) > c.cfg.MaxPayload {
		it.tooLarge = true
		it.msg.Payload = nil
	}
	in := &c.in
	if it.msg.QoS == 0 {
		if in.qos0.Add(1) > int64(c.cfg.MaxPendingQoS0) {
			in.qos0.Add(-1)
			c.pendingFull.Add(1)
			c.dropEarly(&it.msg, subscribers.QueueFull)
			return
		}
	}
	in.n.Add(1)
	in.push(it)
}

// done counts it, a message, out of the intake once handed over.
func (in *intake) done(it *inbound) {
	if it.msg.QoS == 0 {
		in.qos0.Add(-1)
	}
	in.n.Add(-1)
}

// push appends it to the intake and wakes the intake goroutine.
func (in *intake) push(it inbound) {
	in.mu.Lock()
	in.q = append(in.q, it)
	in.mu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// dropEarly counts a message dropped before the intake on every
// subscription it was meant for.
func (c *Client) dropEarly(m *subscribers.Message, r subscribers.Reason) { c.router.Refuse(m, r) }

// runIntake hands the intake's messages over, in order, until Close.
func (c *Client) runIntake() {
	defer close(c.intakeDone)
	in := &c.in
	var batch []inbound
	for {
		select {
		case <-in.wake:
		case <-c.stop:
			return
		}
		for {
			in.mu.Lock()
			if len(in.q) == 0 || in.paused.Load() {
				in.mu.Unlock()
				break
			}
			batch, in.q = in.q, batch[:0]
			in.mu.Unlock()
			for i := range batch {
				select {
				case <-c.stop:
					// Not acknowledged: a persistent session gets
					// them again on the next connection.
					return
				default:
				}
				if in.paused.Load() {
					// Back to the front of the queue, in order.
					in.mu.Lock()
					in.q = append(slices.Clone(batch[i:]), in.q...)
					in.mu.Unlock()
					clear(batch)
					batch = batch[:0]
					break
				}
				c.deliver(&batch[i])
				batch[i] = inbound{}
			}
		}
	}
}

// deliver hands one message to the router, which delivers it to the
// subscriptions it matches, and then acknowledges it.
func (c *Client) deliver(it *inbound) {
	defer c.in.done(it)
	refused := false
	switch {
	case c.takeFence(&it.msg):
	case it.tooLarge:
		c.tooLarge.Add(1)
		c.router.Refuse(&it.msg, subscribers.TooLarge)
	default:
		rc := c.router.Receive(&it.msg)
		switch {
		case rc.Matched == 0:
			if it.msg.Topic != c.cfg.StatusTopic {
				c.unrtd.Add(1)
			}
		case rc.Accepted > 0:
			c.delivered.Add(1)
		default:
			refused = !rc.Echo
		}
	}
	if it.ack == nil {
		return
	}
	if refused && c.in.paused.Load() {
		// Paused for shutdown, and the subscriptions closed meanwhile:
		// leave the message to the broker, which sends it again to the
		// next session.
		return
	}
	// After a lost connection paho drops the ack; the broker sends the
	// message again (DUP) on a persistent session.
	it.ack.Ack()
}
