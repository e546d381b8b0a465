package mqtt

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/robotexec/robotexec/subscribers"
)

// The connection's life: connectLoop makes the first connection; paho
// reconnects after a loss and calls the handlers below, from its own
// goroutines, which must not block.

// connectLoop makes the first connection, retrying with exponential
// backoff and jitter; paho reconnects by itself after that.
func (c *Client) connectLoop() {
	defer close(c.connectDone)
	wait := c.cfg.MinBackoff
	for {
		tok := c.pc.Connect()
		select {
		case <-tok.Done():
		case <-c.stop:
			return
		}
		if tok.Error() == nil {
			close(c.resumed)
			return
		}
		// onNotification has recorded and logged the failure.
		d := wait/2 + rand.N(wait/2+1)
		select {
		case <-time.After(d):
		case <-c.stop:
			return
		}
		wait = min(2*wait, c.cfg.MaxBackoff)
	}
}

// onNotification runs in paho's connecting goroutine; it must not block.
func (c *Client) onNotification(_ paho.Client, n paho.ConnectionNotification) {
	f, ok := n.(paho.ConnectionNotificationFailed)
	if !ok {
		return
	}
	c.counters.failures.Add(1)
	err := c.describe(f.Reason)
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

// describe turns a connection error into one that says what to check. It
// never includes the password: paho's errors do not carry it, and the URL
// it may have held was stripped of credentials.
func (c *Client) describe(err error) error {
	switch {
	case errors.Is(err, packets.ErrorRefusedNotAuthorised), errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword):
		if c.cfg.Username == "" {
			return fmt.Errorf("%w: anonymous connections are not allowed (%v)", ErrNotAuthorized, err)
		}
		return fmt.Errorf("%w of user %q (%v)", ErrNotAuthorized, c.cfg.Username, err)
	case errors.Is(err, packets.ErrorRefusedIDRejected):
		return fmt.Errorf("mqtt: broker rejected client ID %q: %w", c.cfg.ClientID, err)
	}
	return err
}

// onReconnecting runs in paho's reconnecting goroutine before every
// attempt, so always after a loss and before the next onConnect.
func (c *Client) onReconnecting(paho.Client, *paho.ClientOptions) {
	c.mu.Lock()
	c.epoch++
	close(c.lost)
	c.lost = make(chan struct{})
	c.linkUp = false
	c.setReady(false)
	c.mu.Unlock()
}

// onConnectionLost runs in a goroutine of its own after a loss, in no
// particular order with onReconnecting and onConnect; it only reports.
func (c *Client) onConnectionLost(_ paho.Client, err error) {
	c.losses.Add(1)
	if !c.closed.Load() {
		c.log.Warn("mqtt: connection lost, reconnecting", "broker", c.cfg.display, "client_id", c.cfg.ClientID, "error", err)
	}
}

// onConnect runs in its own goroutine after every successful connection:
// it subscribes every attached filter again (paho's ResumeSubs does not),
// lets the publications queued before the first connection go, publishes
// the fence of a new connection (fence.go) and the online status.
func (c *Client) onConnect(pc paho.Client) {
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return
	}
	epoch := c.epoch
	c.linkUp = true
	filters := maps.Clone(c.wire)
	for _, own := range []string{c.cfg.StatusTopic, c.cfg.fence} {
		// See reassertOnline and fence.go.
		if _, ok := filters[own]; !ok && own != "" {
			filters[own] = 0
		}
	}
	attempts := c.failures
	c.failures, c.lastErr = 0, nil
	c.mu.Unlock()

	n := c.connects.Add(1)
	if n > 1 {
		c.reconnects.Add(1)
	}
	c.log.Info("mqtt: connected", "broker", c.cfg.display, "client_id", c.cfg.ClientID,
		"reconnect", n > 1, "failed_attempts", attempts, "subscriptions", len(filters))
	if len(filters) > 0 {
		if err := c.ownRefused(c.subscribe(filters)); err != nil {
			c.log.Error("mqtt: subscribe after connecting", "broker", c.cfg.display, "error", err)
		}
	}
	// paho resumes the session after calling this handler, at the same
	// time: it lists the publications of its store and sends them again.
	// One handed to paho before the listing, once connected, would be
	// sent twice, and the broker would send its echo twice, the second
	// one to the subscriptions that had it locally. On the first
	// connection the publications wait until paho has resumed, which it
	// does before completing Connect's token.
	select {
	case <-c.resumed:
	case <-c.stop:
		return
	}
	c.openOutbound()
	if n > 1 {
		c.publishFence()
		c.republishKept()
	}
	if c.cfg.StatusTopic != "" {
		// QoS 0 keeps the status out of paho's store, so that it is
		// never sent again, stale, after a later reconnection; if this
		// connection fails, the will says offline.
		pc.Publish(c.cfg.StatusTopic, 0, true, StatusOnline)
	}
	c.mu.Lock()
	if c.epoch == epoch && c.linkUp && pc.IsConnectionOpen() && !c.closed.Load() {
		c.setReady(true)
	}
	c.mu.Unlock()
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

// subscribe sends one SUBSCRIBE for filters and waits for the broker's
// answer, up to the connect timeout. It fails with a *refusal when the
// broker refuses some of the filters.
func (c *Client) subscribe(filters map[string]byte) error {
	tok := c.pc.SubscribeMultiple(filters, nil)
	if err := c.wait(tok, c.cfg.ConnectTimeout); err != nil {
		return err
	}
	st, ok := tok.(*paho.SubscribeToken)
	if !ok {
		return nil
	}
	result := st.Result()
	r := &refusal{broker: c.cfg.display}
	for f := range filters {
		// paho keys a shared subscription's result by its inner filter.
		key, _ := subscribers.RouteFilter(f)
		if result[key] >= 0x80 { // 0x80, or a broker's MQTT 5 reason code
			r.filters = append(r.filters, f)
		}
	}
	if len(r.filters) == 0 {
		return nil
	}
	slices.Sort(r.filters)
	return r
}

// refusal is the error of a SUBSCRIBE of which the broker refused some
// filters; it is an ErrSubscriptionRefused.
type refusal struct {
	filters []string
	broker  string
}

func (r *refusal) Error() string {
	quoted := make([]string, len(r.filters))
	for i, f := range r.filters {
		quoted[i] = strconv.Quote(f)
	}
	return fmt.Sprintf("%v to %s (broker %s)", ErrSubscriptionRefused, strings.Join(quoted, ", "), r.broker)
}

func (r *refusal) Is(target error) bool { return target == ErrSubscriptionRefused }

// ownRefused takes the client's own topics (its status, its fences) out
// of err, a subscribe error: a broker whose access rules leave them out
// costs the client its fences and drain marks (LeaveShared then does not
// wait for the messages that came before), which it says once, at Warn. It returns what is left of
// err.
func (c *Client) ownRefused(err error) error {
	r, ok := err.(*refusal)
	if !ok {
		return err
	}
	kept := r.filters[:0]
	own := false
	for _, f := range r.filters {
		if f == c.cfg.fence || f == c.cfg.StatusTopic {
			own = true
			continue
		}
		kept = append(kept, f)
	}
	if own && c.fenceOff.CompareAndSwap(false, true) {
		c.log.Warn("mqtt: the broker refuses this client its own topics: no fences nor drain marks", "broker", c.cfg.display,
			"topics", fmt.Sprintf("robotexec/%s/#", c.cfg.ClientID))
	}
	if r.filters = kept; len(kept) == 0 {
		return nil
	}
	return r
}

// errTimeout reports a token that did not complete in time.
var errTimeout = errors.New("mqtt: no answer from the broker in time")

// wait waits for tok up to d, or until Close.
func (c *Client) wait(tok paho.Token, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-tok.Done():
		return tok.Error()
	case <-t.C:
		return errTimeout
	case <-c.stop:
		return ErrClosed
	}
}
