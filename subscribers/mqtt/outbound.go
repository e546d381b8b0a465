package mqtt

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/robotexec/robotexec/subscribers"
)

// maxOutbound bounds the publications waiting for paho.
const maxOutbound = 1 << 16

// ErrBacklog is returned by a publication that finds 65,536 publications
// waiting for the broker connection already.
var ErrBacklog = errors.New("mqtt: too many publications waiting for the broker")

// The outbound queue decouples the router's publishers from paho. paho's
// Publish hands each message to its own goroutines and waits while they
// are busy writing the previous one, so a callback that published to the
// broker directly would wait for a goroutine switch or a system call per
// message, and the next stage of a local pipeline with it. So the router's
// Publish only appends the message here and returns; one goroutine, the
// feeder, hands the messages to paho in order.
//
// Until the first connection has subscribed (so that echoes come back)
// and paho has resumed its session (see onConnect), QoS 1 and 2
// publications wait here, as paho keeps those made while it
// reconnects: a process that starts before its broker loses none. QoS 0
// ones fail then, as while reconnecting.
type outbound struct {
	mu     sync.Mutex
	q      []outgoing
	open   bool // the first connection has subscribed: the feeder feeds
	closed bool
	wake   chan struct{} // buffered: a pending wake-up
	done   chan struct{} // closed when the feeder ends
	n      atomic.Int64  // publications queued or being handed to paho
	// last is the token of the last QoS 1 or 2 publication handed to
	// paho: the broker acknowledges in order, so when it completes the
	// broker has every earlier one (Close waits for it).
	last atomic.Pointer[paho.Token]
}

// outgoing is a publication waiting for paho.
type outgoing struct {
	m    subscribers.Message
	sent subscribers.Sent
	// handed, when not nil, receives paho's token, or the error that
	// kept m from paho (PublishWait).
	handed chan<- handing
	// mark, when not "", makes m a fence or a drain mark (see fence.go),
	// whose payload hand writes: num for a drain mark, the hand-over's
	// number for a fence.
	mark string
	num  uint64
}

// handing is what hand did with a publication.
type handing struct {
	tok paho.Token
	err error
}

func (o *outbound) init() {
	o.wake = make(chan struct{}, 1)
	o.done = make(chan struct{})
}

func (o *outbound) len() int { return int(o.n.Load()) }

func (o *outbound) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// enqueue appends g for the feeder, or fails when it knows that its
// message cannot go.
func (c *Client) enqueue(g outgoing) error {
	m := g.m
	o := &c.out
	o.mu.Lock()
	var err error
	switch {
	case m.QoS > 2:
		err = errBadQoS(m)
	case c.cfg.MaxPayload > 0 && len(m.Payload) > c.cfg.MaxPayload:
		err = fmt.Errorf("%w: publish %q: %d bytes, over %d", subscribers.ErrTooLarge, m.Topic, len(m.Payload), c.cfg.MaxPayload)
	case !c.writable(m.Topic):
		err = wrapPublish(m.Topic, ErrForbidden)
	case o.closed:
		err = wrapPublish(m.Topic, ErrClosed)
	case m.QoS == 0 && (!o.open || !c.pc.IsConnectionOpen()):
		// paho would report success and drop it.
		err = wrapPublish(m.Topic, ErrNotConnected)
	case len(o.q) >= maxOutbound:
		err = wrapPublish(m.Topic, ErrBacklog)
	default:
		o.q = append(o.q, g)
		o.n.Add(1)
	}
	o.mu.Unlock()
	if err != nil {
		if g.mark == "" { // the client's own marks are not publications
			c.publishFailed.Add(1)
		}
		return err
	}
	o.signal()
	return nil
}

// writable reports whether Config.Writable lets the client publish to
// topic.
func (c *Client) writable(topic string) bool {
	if c.cfg.Writable == nil {
		return true
	}
	for _, f := range c.cfg.Writable {
		if subscribers.Match(f, topic) {
			return true
		}
	}
	return false
}

// openOutbound lets the feeder feed paho; onConnect calls it once the
// connection has subscribed.
func (c *Client) openOutbound() {
	o := &c.out
	o.mu.Lock()
	o.open = true
	o.mu.Unlock()
	o.signal()
}

// runFeeder hands the queued publications to paho, in order, until Close;
// then it hands over what is left, if connected, and ends.
func (c *Client) runFeeder() {
	o := &c.out
	defer close(o.done)
	var batch []outgoing
	for {
		c.feed(&batch)
		o.mu.Lock()
		closed := o.closed
		o.mu.Unlock()
		if closed {
			return
		}
		<-o.wake
	}
}

// feed hands over the queue until it is empty, or not open; once closed,
// it fails what cannot go.
func (c *Client) feed(batch *[]outgoing) {
	o := &c.out
	for {
		o.mu.Lock()
		if !o.open || len(o.q) == 0 {
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
		for i := range *batch {
			c.hand(&(*batch)[i])
			(*batch)[i] = outgoing{}
			o.n.Add(-1)
		}
	}
}

// fail fails the publications that the client closed before handing them
// over.
func (c *Client) fail(gs []outgoing) {
	if len(gs) == 0 {
		return
	}
	c.out.n.Add(-int64(len(gs)))
	c.publishFailed.Add(uint64(len(gs)))
	c.log.Warn("mqtt: closed before the broker connection took these publications", "publications", len(gs))
	for _, g := range gs {
		err := wrapPublish(g.m.Topic, ErrClosed)
		if g.sent != nil {
			g.sent.Sent(0, err)
		}
		if g.handed != nil {
			g.handed <- handing{err: err}
		}
	}
}

// hand gives one publication to paho, numbering it (see fence.go), and
// tells its Sent.
func (c *Client) hand(g *outgoing) {
	seq := c.handoffs.Add(1)
	switch g.mark {
	case fenceKind:
		g.m.Payload = c.markPayload(fenceKind, seq)
	case drainKind:
		g.m.Payload = c.markPayload(drainKind, g.num)
	}
	tok, err := c.send(&g.m)
	if err == nil && g.m.QoS > 0 {
		c.out.last.Store(&tok)
	}
	if err == nil {
		select {
		case <-tok.Done():
			if terr := tok.Error(); terr != nil && (g.m.QoS == 0 || !keptForResend(terr)) {
				err = wrapPublish(g.m.Topic, terr)
			}
		default:
		}
	}
	if err != nil && g.mark == "" { // the client's own marks are not publications
		c.publishFailed.Add(1)
	}
	if err != nil && g.handed == nil && g.mark == "" {
		// The publisher has returned: the failure is counted and logged.
		c.lateFails.Log(c.log, slog.LevelWarn, "mqtt: publish failed", "topic", g.m.Topic, "error", err)
	}
	if g.sent != nil {
		g.sent.Sent(seq, err)
	}
	if g.handed != nil {
		g.handed <- handing{tok: tok, err: err}
	}
}

// keptForResend reports whether err, the error of the token of a QoS 1 or
// 2 publication, is a failure to write it to a connection that was lost:
// paho keeps the publication in its store then, and sends it again after
// reconnecting, so it has not failed.
func keptForResend(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe)
}

// closeOutbound refuses new publications; the feeder hands over what is
// queued and ends.
func (c *Client) closeOutbound() {
	o := &c.out
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.signal()
}

// waitAcknowledged waits, at most d, until the broker acknowledged the
// last QoS 1 or 2 publication handed to paho, and so every earlier one.
func (c *Client) waitAcknowledged(d time.Duration) bool {
	p := c.out.last.Load()
	if p == nil {
		return true
	}
	if !c.pc.IsConnectionOpen() {
		return false // kept for a resend that will not come
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-(*p).Done():
		return true
	case <-t.C:
		return false
	}
}
