package mqtt

import (
	"strings"
	"sync/atomic"
	"time"
)

// The brakes bound what a client holds in memory when the broker sends
// faster than the process can pass messages on.
//
// The intake's brake ties the intake to the outbound queue. A process
// that forwards what it receives (a bridge) receives as fast as the broker
// sends, but publishes only as fast as the broker takes: at most the
// broker's Receive Maximum of QoS 1 and 2 publications unacknowledged
// (mosquitto's max_inflight_messages). Publications that the broker does
// not take yet wait in the outbound queue, so without a brake a burst
// would wait there, in this process, up to maxOutbound of them. So while
// more than brakeHigh publications wait for the broker, the intake hands
// nothing over, and acknowledges nothing more, until they are brakeLow or
// fewer: the broker stops sending once Config.ReceiveMaximum messages are
// unacknowledged, and the backlog waits at the broker, as it does behind a
// stalled subscription. The outbound queue drains on its own (the feeder,
// and the connection's reader, which reads the broker's acknowledgements),
// so the brake lets go while connected.
//
// The reader's brake is for a broker that sends more than the client's
// Receive Maximum: mosquitto 2.0.11, once the client acknowledges,
// sends what it queued for the client, up to its max_queued_messages,
// whatever the Receive Maximum. When the intake holds more QoS 1 and 2
// messages than Config.ReceiveMaximum, the connection's reader waits
// before it takes another, until the intake is down to half of it, so
// that the broker's messages wait in the connection and at the broker. It
// does not wait while publications of the client wait for the broker's
// acknowledgements, which it must read: behind messages that such a
// broker pushed, they would wait for the subscriptions, and the
// publications with them. It waits at most half of each window of half
// the keep-alive (at most the ping timeout), so that the broker's answer
// to a ping, which may come behind the messages, is read in time; and
// when the intake hands nothing over for readerWait (a subscription that
// blocks), it stops waiting until the intake is down to half. Against
// such a broker the brake slows the intake's growth rather than bounding
// it when the subscriptions are slower than the broker sends. A broker that keeps to the Receive
// Maximum never makes it wait.
const (
	// brakeHigh is the outbound backlog at which the intake stops.
	brakeHigh = 1024
	// brakeLow is the backlog at which it goes on.
	brakeLow = brakeHigh / 2
	// readerWait is how long the intake may hand nothing over before the
	// connection's reader stops waiting for it.
	readerWait = 100 * time.Millisecond
)

// brake is a count's side of a brake: a waiter waits for the count to
// fall to low.
type brake struct {
	low     int64
	waiting atomic.Bool   // someone waits for room
	room    chan struct{} // buffered: the count fell to low
	stalled atomic.Bool   // a wait timed out: none until the count is low
	window  atomic.Int64  // the reader's: when its budget's window began, ns after brakeEpoch
	spent   atomic.Int64  // the reader's: ns waited in that window
}

func (b *brake) init(low int64) {
	b.low = low
	b.room = make(chan struct{}, 1)
}

// released tells the brake that the count is now n.
func (b *brake) released(n int64) {
	if n > b.low {
		return
	}
	if b.stalled.Load() {
		b.stalled.Store(false)
	}
	if b.waiting.Load() && b.waiting.CompareAndSwap(true, false) {
		b.signal()
	}
}

// signal wakes the waiter, if any, to look again.
func (b *brake) signal() {
	select {
	case b.room <- struct{}{}:
	default:
	}
}

// awaitRoom holds the intake while the outbound backlog is above
// brakeHigh, until it is brakeLow or less; it reports false when the
// client closed meanwhile. The acknowledgements of the messages handed
// over before go first.
func (c *Client) awaitRoom() bool {
	o := &c.out
	if o.len() <= brakeHigh {
		return true
	}
	c.flushAcks()
	c.braked.Add(1)
	c.in.reader.signal() // the reader reads on while the intake waits
	for {
		o.brake.waiting.Store(true)
		if o.len() <= brakeLow {
			o.brake.waiting.Store(false)
			return true
		}
		select {
		case <-o.brake.room:
		case <-c.ctx.Done():
			return false
		}
	}
}

// publishing reports whether publications of the client wait for the
// broker's acknowledgement, which the reader must read.
func (c *Client) publishing() bool {
	if c.sess5 != nil {
		return c.sess5.inFlight() > 0
	}
	if c.out.len() > 0 {
		return true
	}
	for _, key := range c.store3.All() {
		if strings.HasPrefix(key, "o.") { // paho.mqtt.golang's outbound keys
			return true
		}
	}
	return false
}

// awaitIntake holds the connection's reader, which received a QoS 1 or 2
// message, while the intake holds more of them than the Receive Maximum,
// its own brake does not hold and no publication of the client awaits
// its acknowledgement: as long as the intake hands a message over at
// least once every readerWait, and for at most half of each window of
// readerWindow (the broker's answer to a ping may be waiting behind the
// messages: the reader reads freely the other half). After a wait that
// the intake's stall ended, not again until the intake is down to half.
func (c *Client) awaitIntake() {
	in := &c.in
	held := func() int64 { return in.n.Load() - in.qos0.Load() }
	over := func() bool {
		return held() > int64(c.cfg.ReceiveMaximum) && !in.reader.stalled.Load() && !c.out.brake.waiting.Load() && !c.publishing()
	}
	if !over() {
		return
	}
	began := time.Now()
	window, at := c.readerWindow(), int64(began.Sub(brakeEpoch))
	if at-in.reader.window.Load() >= int64(window) {
		in.reader.window.Store(at)
		in.reader.spent.Store(0)
	}
	left := window/2 - time.Duration(in.reader.spent.Load())
	if left <= 0 {
		return
	}
	c.overSent.Add(1)
	defer func() { in.reader.spent.Add(int64(time.Since(began))) }()
	tick := time.NewTicker(readerWait)
	defer tick.Stop()
	until := time.NewTimer(left)
	defer until.Stop()
	last := held()
	for {
		in.reader.waiting.Store(true)
		if !over() {
			in.reader.waiting.Store(false)
			return
		}
		select {
		case <-in.reader.room:
		case <-until.C:
			in.reader.waiting.Store(false)
			return
		case <-tick.C:
			if now := held(); now < last {
				last = now
				continue
			}
			in.reader.waiting.Store(false)
			in.reader.stalled.Store(true)
			return
		case <-c.ctx.Done():
			return
		}
	}
}

// brakeEpoch is the origin of the reader's windows, read on the
// monotonic clock.
var brakeEpoch = time.Now()

// readerWindow is the window of the connection's reader's budget: half
// the keep-alive, and at most the ping timeout (MQTT 3.1.1), so that the
// reader reads freely at least half of the time within which the broker's
// answer to a ping must be read.
func (c *Client) readerWindow() time.Duration {
	return max(2*readerWait, min(c.cfg.KeepAlive/2, c.cfg.PingTimeout))
}
