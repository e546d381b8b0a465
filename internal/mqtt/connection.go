package mqtt

import (
	"context"
	"math/rand/v2"
	"slices"
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

// run makes the client's connections until Close. It tries the brokers
// in turn, from the first: after a failed attempt, or a lost connection,
// the next at once; after a round of failed attempts, the next after a
// backoff.
func (c *Client) run() {
	defer close(c.runDone)
	wait := c.cfg.MinBackoff
	n := len(c.cfg.brokers)
	next, failedInRound := 0, 0
	for {
		ep := c.cfg.brokers[next]
		c.at.Store(int32(next))
		next = (next + 1) % n
		res, err := c.attempt(ep)
		if err != nil {
			if c.ctx.Err() != nil {
				return
			}
			c.failed(ep, err)
			if failedInRound++; failedInRound < n {
				continue
			}
			failedInRound = 0
			select {
			case <-time.After(wait/2 + rand.N(wait/2+1)):
			case <-c.ctx.Done():
				return
			}
			wait = min(2*wait, c.cfg.MaxBackoff)
			continue
		}
		wait, failedInRound = c.cfg.MinBackoff, 0
		if c.ctx.Err() != nil {
			res.l.close() // made as Close began
			return
		}
		c.up(ep, res)
		select {
		case <-res.l.done():
			c.down(ep, res.l)
		case <-c.ctx.Done():
			return // Close disconnects
		}
	}
}

// attempt dials the broker ep and makes a connection, within the connect
// timeout.
func (c *Client) attempt(ep *endpoint) (connected, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.ConnectTimeout)
	defer cancel()
	nc, err := c.dial(ctx, ep)
	if err != nil {
		return connected{}, err
	}
	fc := newFrameConn(nc, c.cfg.v5, c.cfg.packetLimit(), &c.hooks, c.cfg.WriteTimeout)
	if c.cfg.v5 {
		return c.connect5(ctx, fc, ep)
	}
	return c.connect3(ctx, fc, ep)
}

// failed records and logs a failed connection attempt to ep.
func (c *Client) failed(ep *endpoint, err error) {
	c.counters.failures.Add(1)
	now := time.Now()
	c.mu.Lock()
	if c.lastErrs == nil {
		c.lastErrs = make(map[*endpoint]error, len(c.cfg.brokers))
	}
	c.lastErrs[ep] = err
	c.failures++
	attempts := c.failures
	if c.failLogs == nil {
		c.failLogs = make(map[*endpoint]failLog, len(c.cfg.brokers))
	}
	last := c.failLogs[ep]
	logIt := attempts == 1 || err.Error() != last.msg || now.Sub(last.at) >= failureLogEvery
	if logIt {
		c.failLogs[ep] = failLog{now, err.Error()}
	}
	c.mu.Unlock()
	if logIt {
		c.log.Warn("mqtt: waiting for broker, retrying", "broker", ep.display,
			"client_id", c.cfg.ClientID, "attempts", attempts, "error", err)
	}
}

// up starts using a new connection to ep: it subscribes every filter
// again, lets the publications go, publishes the kept messages again
// after a reconnection and says online.
func (c *Client) up(ep *endpoint, res connected) {
	l := res.l
	c.maxPacket.Store(int64(res.maxPacket))
	c.subMu.Lock()
	c.mu.Lock()
	c.link, c.on = l, ep
	ws := make([]wireState, 0, len(c.wire)+1)
	for _, w := range c.wire {
		ws = append(ws, *w)
	}
	attempts, lost, prev := c.failures, c.lostAt, c.prev
	c.failures, c.lastErrs = 0, nil
	c.mu.Unlock()
	n := c.connects.Add(1)
	if n > 1 {
		c.reconnects.Add(1)
	}
	c.log.Info("mqtt: connected", "broker", ep.display, "client_id", c.cfg.ClientID, "protocol", c.cfg.Protocol,
		"reconnect", n > 1, "session_present", res.sessionPresent, "failed_attempts", attempts, "subscriptions", len(ws))
	if n > 1 && !res.sessionPresent && !c.cfg.CleanSession {
		c.sessionLost(ep, prev, lost, ws, res.resent)
	}
	if st := c.cfg.StatusTopic; st != "" {
		// See reassertOnline; never any retained message.
		ws = append(ws, wireState{w: bus.WireFilter{Filter: st, ID: ownID}, status: true})
	}
	if dt := c.cfg.DescribeTopic; dt != "" {
		ws = append(ws, wireState{w: bus.WireFilter{Filter: dt, ID: ownID, NoLocal: true}, status: true})
	}
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
	c.sayOnline(l, ep)
	c.mu.Lock()
	select {
	case <-l.done():
	default:
		if c.link == l && !c.closed.Load() {
			c.setReady(true)
		}
	}
	c.mu.Unlock()
	if f := c.cfg.OnConnect; f != nil {
		f(ep.display)
	}
}

// sessionLost counts and says, once, that the broker ep has no session
// for the persistent client, which had one when its connection to prev
// was lost at lost: what its subscriptions' filters carried meanwhile is
// missed, while its own unacknowledged publications (resent of them)
// go again, and its subscriptions are made again.
func (c *Client) sessionLost(ep, prev *endpoint, lost time.Time, ws []wireState, resent int) {
	c.sessionsLost.Add(1)
	filters := make([]string, 0, len(ws))
	for _, w := range ws {
		filters = append(filters, w.w.Filter)
	}
	slices.Sort(filters)
	args := []any{"broker", ep.display, "client_id", c.cfg.ClientID}
	if prev != nil && prev != ep {
		args = append(args, "previous_broker", prev.display)
	}
	if !lost.IsZero() {
		args = append(args, "gap", time.Since(lost).Round(time.Millisecond))
	}
	c.log.Warn("mqtt: the broker has no session for this client (session_present=false): messages published "+
		"to its subscriptions' filters while it was disconnected may be missed; its unacknowledged publications "+
		"are sent again and its subscriptions made again",
		append(args, "filters", filters, "publications_resent", resent)...)
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
				c.log.Warn("mqtt: subscribing after connecting failed, reconnecting", "broker", c.Broker(),
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

// down stops using a connection to ep that ended.
func (c *Client) down(ep *endpoint, l link) {
	c.out.setLink(nil)
	c.mu.Lock()
	if c.link == l {
		c.link, c.on = nil, nil
	}
	c.prev, c.lostAt = ep, time.Now()
	c.setReady(false)
	c.mu.Unlock()
	if l3, ok := l.(*link3); ok {
		// A clean session's broker forgot them: they go first on the
		// next connection.
		c.requeue(l3.unacknowledged())
	}
	c.losses.Add(1)
	if !c.closed.Load() {
		next := c.cfg.brokers[(int(c.at.Load())+1)%len(c.cfg.brokers)]
		c.log.Warn("mqtt: connection lost, reconnecting", "broker", ep.display, "next", next.display,
			"client_id", c.cfg.ClientID, "error", l.err())
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

// currentBroker returns the connection and its broker, nil between
// connections.
func (c *Client) currentBroker() (link, *endpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.link, c.on
}

// current returns the connection, nil between connections.
func (c *Client) current() link {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.link
}
