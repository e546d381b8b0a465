package mqtt

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/internal/bus"
)

// The connection's life: run makes a connection, renews the
// subscriptions on it and lets the publications go, waits until it ends,
// and makes the next, retrying with backoff while the broker cannot be
// reached. The paho libraries speak the protocol on each connection (see
// link.go); the client keeps what outlives one.

// run makes the client's connections until Close.
func (c *Client) run() {
	defer close(c.runDone)
	wait := c.cfg.MinBackoff
	for {
		res, err := c.attempt()
		if err != nil {
			if c.ctx.Err() != nil {
				return
			}
			c.failed(err)
			select {
			case <-time.After(wait/2 + rand.N(wait/2+1)):
			case <-c.ctx.Done():
				return
			}
			wait = min(2*wait, c.cfg.MaxBackoff)
			continue
		}
		wait = c.cfg.MinBackoff
		if c.ctx.Err() != nil {
			res.l.close() // made as Close began
			return
		}
		c.up(res)
		select {
		case <-res.l.done():
			c.down(res.l)
		case <-c.ctx.Done():
			return // Close disconnects
		}
	}
}

// attempt dials the broker and makes a connection, within the connect
// timeout.
func (c *Client) attempt() (connected, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.ConnectTimeout)
	defer cancel()
	nc, err := c.dial(ctx)
	if err != nil {
		return connected{}, err
	}
	fc := newFrameConn(nc, c.cfg.v5, c.cfg.packetLimit(), &c.hooks, c.cfg.WriteTimeout)
	if c.cfg.v5 {
		return c.connect5(ctx, fc)
	}
	return c.connect3(ctx, fc)
}

// failed records and logs a failed connection attempt.
func (c *Client) failed(err error) {
	c.counters.failures.Add(1)
	now := time.Now()
	c.mu.Lock()
	c.lastErr = err
	c.failures++
	attempts := c.failures
	logIt := attempts == 1 || err.Error() != c.failMsg || now.Sub(c.failLog) >= failureLogEvery
	if logIt {
		c.failLog, c.failMsg = now, err.Error()
	}
	c.mu.Unlock()
	if logIt {
		c.log.Warn("mqtt: waiting for broker, retrying", "broker", c.cfg.display,
			"client_id", c.cfg.ClientID, "attempts", attempts, "error", err)
	}
}

// up starts using a new connection: it subscribes every filter again,
// lets the publications go, publishes the kept messages again after a
// reconnection and says online.
func (c *Client) up(res connected) {
	l := res.l
	c.maxPacket.Store(int64(res.maxPacket))
	c.subMu.Lock()
	c.mu.Lock()
	c.link = l
	ws := make([]wireState, 0, len(c.wire)+1)
	for _, w := range c.wire {
		ws = append(ws, *w)
	}
	attempts := c.failures
	c.failures, c.lastErr = 0, nil
	c.mu.Unlock()
	if st := c.cfg.StatusTopic; st != "" {
		// See reassertOnline; never any retained message.
		ws = append(ws, wireState{w: bus.WireFilter{Filter: st, ID: ownID}, status: true})
	}
	n := c.connects.Add(1)
	if n > 1 {
		c.reconnects.Add(1)
	}
	c.log.Info("mqtt: connected", "broker", c.cfg.display, "client_id", c.cfg.ClientID, "protocol", c.cfg.Protocol,
		"reconnect", n > 1, "session_present", res.sessionPresent, "failed_attempts", attempts, "subscriptions", len(ws))
	renewed := c.renew(l, ws)
	c.subMu.Unlock()
	if !renewed {
		// A subscription missing from this connection would get nothing
		// until the next one: end it, and the next renews them all.
		l.close()
		return
	}
	c.out.setLink(l)
	if n > 1 {
		c.republishKept()
	}
	c.sayOnline(l)
	c.mu.Lock()
	select {
	case <-l.done():
	default:
		if c.link == l && !c.closed.Load() {
			c.setReady(true)
		}
	}
	c.mu.Unlock()
}

// renewConcurrency bounds the SUBSCRIBEs awaiting the broker's answer
// while a connection renews its subscriptions, one a filter (each has its
// identifier).
const renewConcurrency = 16

// renew subscribes ws on l, asking for their retained messages, which
// may have changed while the process was away (the router drops those
// its subscriptions had: see bus.Renewed), the status topic's aside;
// c.subMu is held. It reports false if a SUBSCRIBE got no answer within
// the connect timeout or failed otherwise on a connection that is still
// up: a refusal is the broker's answer, counted and logged, and the next
// connection renews what the end of this one cut short.
func (c *Client) renew(l link, ws []wireState) bool {
	var wg sync.WaitGroup
	var failed atomic.Bool
	sem := make(chan struct{}, renewConcurrency)
	for _, w := range ws {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(c.ctx, c.cfg.ConnectTimeout)
			defer cancel()
			if !w.status {
				bus.Renewed(c.router, w.w.Filter, w.w.ID)
			}
			err := l.subscribe(ctx, w.w, !w.status)
			switch {
			case err == nil, c.refusals.add(c.log, err), ended(l), c.ctx.Err() != nil:
			default:
				failed.Store(true)
				c.log.Warn("mqtt: subscribing after connecting failed, reconnecting", "broker", c.cfg.display,
					"filter", w.w.Filter, "error", err)
			}
		}()
	}
	wg.Wait()
	return !failed.Load()
}

// ended reports whether l has ended.
func ended(l link) bool {
	select {
	case <-l.done():
		return true
	default:
		return false
	}
}

// down stops using a connection that ended.
func (c *Client) down(l link) {
	c.out.setLink(nil)
	c.mu.Lock()
	if c.link == l {
		c.link = nil
	}
	c.setReady(false)
	c.mu.Unlock()
	if l3, ok := l.(*link3); ok {
		// A clean session's broker forgot them: they go first on the
		// next connection.
		c.requeue(l3.unacknowledged())
	}
	c.losses.Add(1)
	if !c.closed.Load() {
		c.log.Warn("mqtt: connection lost, reconnecting", "broker", c.cfg.display, "client_id", c.cfg.ClientID, "error", l.err())
	}
}

// setReady changes the ready state; c.mu must be held.
func (c *Client) setReady(r bool) {
	switch {
	case r && !c.ready:
		c.ready = true
		close(c.readyCh)
	case !r && c.ready:
		c.ready = false
		c.readyCh = make(chan struct{})
	}
}

// current returns the connection, nil between connections.
func (c *Client) current() link {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.link
}
