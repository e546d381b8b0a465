package mqtt

import (
	"context"
	"time"

	"github.com/robotexec/robotexec/internal/bus"
)

// reassertOnline publishes the online status again when the client sees
// its status read offline while it is connected: the broker may publish
// the last will of a connection it has just replaced after the new
// connection said online (mochi does, when the client reconnects before
// the broker noticed the old connection's end). It runs in paho's router
// goroutine, so the publication runs in a goroutine of its own.
func (c *Client) reassertOnline() {
	l, ep := c.currentBroker()
	if c.closed.Load() || l == nil || !c.reasserting.CompareAndSwap(false, true) {
		return
	}
	if !c.background() {
		c.reasserting.Store(false)
		return
	}
	go func() {
		defer c.bg.Done()
		defer c.reasserting.Store(false)
		// Close takes statusMu before its offline publication, so this
		// one never follows it.
		c.statusMu.Lock()
		defer c.statusMu.Unlock()
		if c.closed.Load() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), closeWait)
		defer cancel()
		c.publishStatus(ctx, l, StatusOnline, ep)
	}()
}

// describe answers a request on the describe topic: it publishes the
// online status and the kept messages again, unless an answer is under
// way, so that a flood of requests makes one answer at a time. It runs in paho's router goroutine, so the
// publications run in a goroutine of their own.
func (c *Client) describe() {
	l, ep := c.currentBroker()
	if c.closed.Load() || l == nil || !c.describing.CompareAndSwap(false, true) {
		return
	}
	if !c.background() {
		c.describing.Store(false)
		return
	}
	go func() {
		defer c.bg.Done()
		defer c.describing.Store(false)
		c.republishKept()
		c.statusMu.Lock()
		defer c.statusMu.Unlock()
		if c.closed.Load() || c.cfg.StatusTopic == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), closeWait)
		defer cancel()
		c.publishStatus(ctx, l, StatusOnline, ep)
	}()
}

// sayOnline publishes the online status on a new connection to ep. QoS 0
// keeps it out of the session, so that it is never sent again, stale,
// after a later reconnection; if this connection fails, the will says
// offline.
func (c *Client) sayOnline(l link, ep *endpoint) {
	if c.cfg.StatusTopic != "" {
		ctx, cancel := context.WithTimeout(context.Background(), closeWait)
		c.publishStatus(ctx, l, StatusOnline, ep)
		cancel()
	}
}

// BrokerProperty is the MQTT 5 user property of the online status that
// names the broker the client is connected to (its URL without
// credentials): with a list of brokers, which one it is on.
const BrokerProperty = "broker"

// publishStatus publishes payload on the status topic, retained at QoS
// 0, on l, and waits until it was written or ctx ends. ep, when not nil,
// is the broker, named in BrokerProperty.
func (c *Client) publishStatus(ctx context.Context, l link, payload string, ep *endpoint) {
	result := make(chan error, 1)
	g := &outgoing{m: bus.Message{Topic: c.cfg.StatusTopic, Payload: []byte(payload), Retained: true}, result: result}
	if ep != nil {
		g.user = [][2]string{{BrokerProperty, ep.display}}
	}
	if err := l.publish(g); err != nil || c.cfg.v5 {
		return // MQTT 5: written, or not
	}
	select {
	case <-result:
	case <-ctx.Done():
	}
}

// background counts a goroutine of the client's that Close waits for; it
// reports false, counting nothing, once Close began waiting.
func (c *Client) background() bool {
	c.bgMu.Lock()
	defer c.bgMu.Unlock()
	if c.bgDone {
		return false
	}
	c.bg.Add(1)
	return true
}

// waitBackground waits for the goroutines counted by background until ctx
// ends, and at most step when step is not 0; none is started after it.
func (c *Client) waitBackground(ctx context.Context, step time.Duration) bool {
	c.bgMu.Lock()
	c.bgDone = true
	c.bgMu.Unlock()
	done := make(chan struct{})
	go func() {
		c.bg.Wait()
		close(done)
	}()
	return waitClosed(ctx, done, step)
}
