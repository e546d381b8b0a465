package mqtt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/robotexec/robotexec/internal/bus"
)

// maxOutbound bounds the publications waiting for the connection.
const maxOutbound = 1 << 16

// ErrBacklog is returned by a publication that finds 65,536 publications
// waiting for the broker connection already.
var ErrBacklog = errors.New("mqtt: too many publications waiting for the broker")

// The outbound queue decouples the router's publishers from the
// connection. Handing a publication to paho writes it to the network, and
// at QoS 1 and 2 may wait for the broker's flow control (its Receive
// Maximum), so a callback that published to the broker directly would
// wait for a system call or the broker, and the next stage of a local
// pipeline with it. So the router's Publish only appends the message here
// and returns; one goroutine, the feeder, hands the messages to the
// connection in order.
//
// Between connections QoS 1 and 2 publications wait here, and go on the
// next connection: a process that starts before its broker loses none.
// QoS 0 ones fail then.
type outbound struct {
	mu     sync.Mutex
	q      []outgoing
	link   link // the connection the feeder feeds, nil between connections
	closed bool
	seq    uint64        // publications queued so far
	wake   chan struct{} // buffered: a pending wake-up
	full   chan struct{} // buffered: MaxLingerBatch wait, or closed (linger.go)
	done   chan struct{} // closed when the feeder ends
	n      atomic.Int64  // publications queued or being handed over
	brake  brake         // holds the intake while n is high (brake.go)
}

// outgoing is a publication waiting for the connection.
type outgoing struct {
	m   bus.Message
	seq uint64 // its place in the queue, kept when it is queued again
	// result, when not nil, receives the outcome: nil once the broker
	// acknowledged it (QoS 1 and 2) or it was written (QoS 0), or the
	// error (PublishWait).
	result chan<- error
	// unsubscribe, when not "", makes this an UNSUBSCRIBE of that filter
	// instead, in order with the publications (see unsubscribeFilter).
	unsubscribe string
	// user are MQTT 5 user properties, keys and values, of the
	// publication.
	user [][2]string
}

func (o *outbound) init() {
	o.wake = make(chan struct{}, 1)
	o.full = make(chan struct{}, 1)
	o.done = make(chan struct{})
	o.brake.init(brakeLow)
}

func (o *outbound) len() int { return int(o.n.Load()) }

func (o *outbound) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// setLink gives the feeder a connection to feed, or none.
func (o *outbound) setLink(l link) {
	o.mu.Lock()
	o.link = l
	o.mu.Unlock()
	o.signal()
}

// enqueue appends g for the feeder, or fails when it knows that its
// message cannot go.
func (c *Client) enqueue(g outgoing) error {
	m := g.m
	o := &c.out
	o.mu.Lock()
	err := c.refuse(&m)
	switch {
	case err != nil:
	case o.closed:
		err = wrapPublish(m.Topic, ErrClosed)
	case m.QoS == 0 && o.link == nil:
		err = wrapPublish(m.Topic, ErrNotConnected)
	case len(o.q) >= maxOutbound:
		err = wrapPublish(m.Topic, ErrBacklog)
	default:
		o.push(g)
	}
	o.mu.Unlock()
	if err != nil {
		c.publishFailed.Add(1)
		c.refusals.add(c.log, err)
		return err
	}
	o.signal()
	return nil
}

// push appends g to the queue, under o.mu.
func (o *outbound) push(g outgoing) {
	o.seq++
	g.seq = o.seq
	o.q = append(o.q, g)
	o.n.Add(1)
	if len(o.q) == MaxLingerBatch {
		o.hurry()
	}
}

// refuse returns why m cannot be published at all, or nil.
func (c *Client) refuse(m *bus.Message) error {
	switch {
	case m.QoS > 2:
		return fmt.Errorf("mqtt: publish %q: QoS %d is not 0, 1 or 2", m.Topic, m.QoS)
	case len(m.Payload) > c.cfg.MaxPayload:
		return fmt.Errorf("%w: publish %q: %d bytes, over %d", bus.ErrTooLarge, m.Topic, len(m.Payload), c.cfg.MaxPayload)
	case !c.writable(m.Topic):
		return wrapPublish(m.Topic, ErrForbidden)
	}
	if max := c.maxPacket.Load(); max > 0 && int64(packetSize(m)) > max {
		return &RefusedError{Op: "publish", Topic: m.Topic, Reason: PacketTooLarge,
			Detail: fmt.Sprintf("%d bytes, over the broker's maximum packet size, %d", packetSize(m), max)}
	}
	return nil
}

// packetSize returns the size of the PUBLISH packet of m as the client
// writes it: no properties.
func packetSize(m *bus.Message) int {
	rl := 2 + len(m.Topic) + 1 + len(m.Payload)
	if m.QoS > 0 {
		rl += 2
	}
	return 1 + vbiLen(rl) + rl
}

// writable reports whether Config.Writable lets the client publish to
// topic.
func (c *Client) writable(topic string) bool {
	if c.cfg.Writable == nil {
		return true
	}
	for _, f := range c.cfg.Writable {
		if bus.Match(f, topic) {
			return true
		}
	}
	return false
}

// requeue puts gs, publications of a session that the broker lost or that
// an ended connection did not take, back in the queue, in the order in
// which they were first queued (their seq) among those waiting: they go
// before those queued later, on the connection being made, however the
// ends of the last connection gave them back.
func (c *Client) requeue(gs []outgoing) {
	if len(gs) == 0 {
		return
	}
	slices.SortFunc(gs, func(a, b outgoing) int { return cmp.Compare(a.seq, b.seq) })
	o := &c.out
	o.mu.Lock()
	o.q = mergeBySeq(gs, o.q)
	o.n.Add(int64(len(gs)))
	o.mu.Unlock()
	o.signal()
}

// mergeBySeq returns a and b, each in seq order, merged in seq order.
func mergeBySeq(a, b []outgoing) []outgoing {
	if len(b) == 0 || a[len(a)-1].seq < b[0].seq {
		return append(a, b...) // the usual case: all before the queue
	}
	out := make([]outgoing, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].seq <= b[0].seq {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// runFeeder hands the queued publications to the connection, in order,
// until Close; then it hands over what is left, if connected, and ends.
func (c *Client) runFeeder() {
	o := &c.out
	defer close(o.done)
	var batch []outgoing
	var lg lingerTimer
	for {
		c.feed(&batch)
		o.mu.Lock()
		closed := o.closed
		o.mu.Unlock()
		if closed {
			return
		}
		<-o.wake
		lg.linger(o, c.cfg.Linger)
	}
}

// feed hands over the queue until it is empty or there is no connection;
// once closed, it fails what cannot go.
func (c *Client) feed(batch *[]outgoing) {
	o := &c.out
	for {
		o.mu.Lock()
		l := o.link
		if l == nil || len(o.q) == 0 {
			var dropped []outgoing
			if o.closed {
				dropped, o.q = o.q, nil
			}
			o.mu.Unlock()
			c.fail(dropped)
			return
		}
		*batch, o.q = o.q, (*batch)[:0]
		o.mu.Unlock()
		c.handBatch(l, *batch)
	}
}

// handBatch hands a batch of publications to l, which sends them together.
func (c *Client) handBatch(l link, batch []outgoing) {
	o := &c.out
	l.hold()
	defer l.release()
	for i := range batch {
		if c.hand(l, &batch[i]) {
			c.requeue(c.keepable(batch[i:]))
			clear(batch)
			o.mu.Lock()
			if o.link == l {
				o.link = nil // the connection ended; the next one feeds
			}
			o.mu.Unlock()
			return
		}
		batch[i] = outgoing{}
		o.brake.released(o.n.Add(-1))
		if c.in.reader.waiting.Load() {
			c.in.reader.signal() // it reads on for the acknowledgement
		}
	}
}

// keepable returns the publications of gs that wait for the next
// connection, QoS 1 and 2 ones, and fails the others.
func (c *Client) keepable(gs []outgoing) []outgoing {
	c.out.n.Add(-int64(len(gs)))
	var kept []outgoing
	for _, g := range gs {
		if g.unsubscribe != "" {
			continue // the next connection does not subscribe it
		}
		if g.m.QoS > 0 {
			kept = append(kept, g)
			continue
		}
		c.failed1(&g, wrapPublish(g.m.Topic, ErrNotConnected))
	}
	return kept
}

// hand gives one publication to the connection l; it reports whether the
// connection had ended, g not taken.
func (c *Client) hand(l link, g *outgoing) (ended bool) {
	if g.unsubscribe != "" {
		// It waits for the broker's answer: what is held goes first.
		l.release()
		defer l.hold()
		ctx, cancel := context.WithTimeout(c.ctx, c.cfg.ConnectTimeout)
		defer cancel()
		if err := l.unsubscribe(ctx, g.unsubscribe); err != nil {
			c.log.Debug("mqtt: unsubscribe", "filter", g.unsubscribe, "error", err)
		}
		return false
	}
	if err := c.refuse(&g.m); err != nil {
		c.failed1(g, err)
		return false
	}
	err := l.publish(g)
	switch {
	case errors.Is(err, errRequeue):
		return true
	case err != nil:
		c.failed1(g, err)
	default:
		c.published.Add(1)
		if g.m.QoS == 0 && g.result != nil {
			tell(g.result, nil)
		}
	}
	return false
}

// settled is told the broker's answer to a QoS 1 or 2 publication: nil,
// or its refusal.
func (c *Client) settled(g *outgoing, err error) {
	if err != nil {
		c.failed1(g, err)
		return
	}
	if g.result != nil {
		tell(g.result, nil)
	}
}

// failed1 counts and reports a publication that failed after Publish
// returned.
func (c *Client) failed1(g *outgoing, err error) {
	c.publishFailed.Add(1)
	if !c.refusals.add(c.log, err) && g.result == nil {
		c.lateFails.Log(c.log, slog.LevelWarn, "mqtt: publish failed", "topic", g.m.Topic, "error", err)
	}
	if g.result != nil {
		tell(g.result, err)
	}
}

// fail fails the publications that the client closed before handing them
// over.
func (c *Client) fail(gs []outgoing) {
	c.out.n.Add(-int64(len(gs)))
	gs = slices.DeleteFunc(gs, func(g outgoing) bool { return g.unsubscribe != "" })
	if len(gs) == 0 {
		return
	}
	c.publishFailed.Add(uint64(len(gs)))
	c.log.Warn("mqtt: closed before the broker connection took these publications", "publications", len(gs))
	for _, g := range gs {
		if g.result != nil {
			tell(g.result, wrapPublish(g.m.Topic, ErrClosed))
		}
	}
}

// closeOutbound refuses new publications; the feeder hands over what is
// queued and ends.
func (c *Client) closeOutbound() { c.out.close() }

// close refuses new publications and wakes the feeder, lingering or not.
func (o *outbound) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.signal()
	o.hurry()
}

func wrapPublish(topic string, err error) error {
	return fmt.Errorf("mqtt: publish %q: %w", topic, err)
}

// tell sends err to a publication's result channel, which holds one
// outcome: a publication sent again after a lost connection is told once.
func tell(result chan<- error, err error) {
	select {
	case result <- err:
	default:
	}
}
