package mqtt

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	paho3 "github.com/eclipse/paho.mqtt.golang"

	"github.com/robotexec/robotexec/internal/bus"
)

// The intake decouples the connection from the subscriptions. paho calls
// the client's handler from its own goroutine; if that goroutine blocked,
// paho would stop reading the connection, PINGRESP included, and drop it
// after the keep-alive. So the handler only appends the message to a FIFO
// and returns. One intake goroutine hands the messages to the
// subscriptions they are for, in arrival order, where each subscription's
// overflow policy applies; with the Block policy it waits there, which
// stalls the intake only, never paho.
//
// QoS 1 and 2 messages are acknowledged (PUBACK, PUBREC) only after they
// were handed over, in arrival order as MQTT requires. A stalled intake
// therefore stops acknowledging, and the broker, which may have at most
// Config.ReceiveMaximum unacknowledged messages in flight to the client
// (MQTT 5; mosquitto's max_inflight_messages with 3.1.1), stops sending:
// the backlog waits at the broker, not in this process. QoS 0 messages
// have no such brake, so at most MaxPendingQoS0 of them wait; newer ones
// are dropped and counted.

// inbound is a received message waiting in the intake.
type inbound struct {
	msg      bus.Message
	id       uint32        // the subscription identifier it carries (MQTT 5), 0: none
	ids      []uint32      // or, when it carries several, all of them
	link     link          // the connection it came on, which acknowledges it
	fc       *frameConn    // and its frames, which count it (nil when injected)
	pid      uint16        // MQTT 5: its packet identifier
	conn     uint64        // MQTT 5: its connection's number in the session
	m3       paho3.Message // MQTT 3.1.1: the message, which acknowledges itself
	dup      bool
	tooLarge bool
	counted  bool // counts toward LeaveShared's drain (not a QoS 2 one sent again)
}

type intake struct {
	mu     sync.Mutex
	q      []inbound
	paused atomic.Bool   // Pause: hold messages, neither deliver nor ack
	wake   chan struct{} // buffered: a pending wake-up
	qos0   atomic.Int64  // QoS 0 messages in q or being handed over
	n      atomic.Int64  // all messages in q or being handed over
	acking link          // the intake goroutine's: whose acknowledgements wait
	reader brake         // holds the connection's reader while the broker sends too much (brake.go)
}

func (in *intake) init(receiveMaximum int) {
	in.wake = make(chan struct{}, 1)
	in.reader.init(int64(receiveMaximum / 2))
}

func (in *intake) len() int { return int(in.n.Load()) }

// onMessage takes a message that a connection received. It never blocks:
// it stamps the arrival time and appends the message to the intake.
func (c *Client) onMessage(it *inbound) {
	it.msg.Received = time.Now()
	it.counted = !(it.msg.QoS == 2 && it.dup)
	c.received.Add(1)
	if it.dup {
		c.redelivered.Add(1)
	}
	if st := c.cfg.StatusTopic; st != "" && it.msg.Topic == st && string(it.msg.Payload) == StatusOffline {
		c.reassertOnline()
	}
	if dt := c.cfg.DescribeTopic; dt != "" && it.msg.Topic == dt {
		c.describe()
	}
	if len(it.msg.Payload) > c.cfg.MaxPayload {
		it.tooLarge = true
		it.msg.Payload = nil
	}
	in := &c.in
	if it.msg.QoS == 0 {
		if in.qos0.Add(1) > int64(c.cfg.MaxPendingQoS0) {
			in.qos0.Add(-1)
			c.pendingFull.Add(1)
			var buf [1]uint32
			bus.Refuse(c.router, &it.msg, it.idList(buf[:0]), bus.QueueFull)
			it.handled()
			return
		}
	}
	in.n.Add(1)
	if it.msg.QoS > 0 {
		c.awaitIntake()
	}
	in.push(*it)
}

// oversized counts a message that the connection read past, over the
// limit, on the subscriptions it was for (see frameConn).
func (c *Client) oversized(topic string, qos byte) {
	c.received.Add(1)
	c.tooLarge.Add(1)
	bus.Refuse(c.router, &bus.Message{Topic: topic, QoS: qos}, nil, bus.TooLarge)
}

// done counts it, a message, out of the intake once handed over.
func (in *intake) done(it *inbound) {
	if it.msg.QoS == 0 {
		in.qos0.Add(-1)
	}
	if n := in.n.Add(-1); it.msg.QoS > 0 {
		in.reader.released(n - in.qos0.Load())
	}
	it.handled()
}

// handled counts it as handled on its connection (see frameConn).
func (it *inbound) handled() {
	if it.counted && it.fc != nil {
		it.fc.handled.Add(1)
	}
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

// maxKeptBatch is the most messages a drained batch's array keeps room
// for: after a burst the larger arrays (168 bytes a message) go.
const maxKeptBatch = 4096

// runIntake hands the intake's messages over, in order, until Close.
func (c *Client) runIntake() {
	defer close(c.intakeDone)
	in := &c.in
	var batch []inbound
	for {
		select {
		case <-in.wake:
		case <-c.ctx.Done():
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
			stopped := c.handOver(batch)
			// The callbacks the batch woke go first: on one processor
			// (executor.procs), a forward they publish is written
			// before the acknowledgements, not after their write.
			runtime.Gosched()
			c.flushAcks()
			clear(batch)
			batch = batch[:0]
			if cap(batch) > maxKeptBatch {
				batch = nil // a burst's: not kept for good
			}
			if stopped {
				return
			}
		}
	}
}

// handOver delivers a batch of messages, in order, until Pause (the rest
// go back to the front of the queue) or Close, which it reports.
func (c *Client) handOver(batch []inbound) (closed bool) {
	in := &c.in
	for i := range batch {
		select {
		case <-c.ctx.Done():
			// Not acknowledged: a persistent session gets them again
			// on the next connection.
			return true
		default:
		}
		if !c.awaitRoom() {
			return true // closed meanwhile: not acknowledged, as above
		}
		if in.paused.Load() {
			in.mu.Lock()
			in.q = append(slices.Clone(batch[i:]), in.q...)
			in.mu.Unlock()
			return false
		}
		c.deliver(&batch[i])
	}
	return false
}

// flushAcks sends the acknowledgements that wait (see link.ack).
func (c *Client) flushAcks() {
	if l := c.in.acking; l != nil {
		l.flushAcks()
		c.in.acking = nil
	}
}

// deliver hands one message to the router, which delivers it to the
// subscriptions it is for, and then acknowledges it.
func (c *Client) deliver(it *inbound) {
	defer c.in.done(it)
	var buf [1]uint32
	ids, own := withoutOwn(it.idList(buf[:0]))
	refused := false
	switch {
	case it.tooLarge:
		c.tooLarge.Add(1)
		bus.Refuse(c.router, &it.msg, ids, bus.TooLarge)
	case own && len(ids) == 0:
		// The client's own status subscription only.
	default:
		receive := bus.Receive
		if it.dup {
			receive = bus.ReceiveAgain
		}
		rc := receive(c.router, &it.msg, ids)
		switch {
		case rc.Matched == 0:
			// The copies of the client's own status and describe
			// request are expected. Without them the topics are "",
			// which a topic name never is (a faulty broker's empty
			// one matches no subscription and is unrouted).
			if t := it.msg.Topic; t == "" || (t != c.cfg.StatusTopic && t != c.cfg.DescribeTopic) {
				c.unrtd.Add(1)
			}
		case rc.Accepted > 0:
			c.delivered.Add(1)
		default:
			refused = true
		}
	}
	if it.msg.QoS == 0 {
		return
	}
	if refused && c.in.paused.Load() {
		// Paused for shutdown, and the subscriptions closed meanwhile:
		// leave the message to the broker, which sends it again to the
		// next session.
		return
	}
	if c.in.acking != it.link {
		c.flushAcks()
		c.in.acking = it.link
	}
	it.link.ack(it)
}

// idList returns its subscription identifiers, in buf when there is one.
func (it *inbound) idList(buf []uint32) []uint32 {
	if it.ids != nil {
		return it.ids
	}
	if it.id != 0 {
		return append(buf, it.id)
	}
	return nil
}

// withoutOwn returns ids without the client's own subscription's
// identifier, and whether it was there.
func withoutOwn(ids []uint32) ([]uint32, bool) {
	i := slices.Index(ids, ownID)
	if i < 0 {
		return ids, false
	}
	return slices.Delete(slices.Clone(ids), i, i+1), true
}
