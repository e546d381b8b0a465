package mqtt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/robotexec/robotexec/subscribers"
)

// The fence tells the router which awaited echoes will not come (see
// subscribers.Router.Fence). The feeder numbers the publications it hands
// to paho. A broker may send on the next connection of a persistent
// session what it had queued for the client when the connection was lost,
// QoS 0 messages included (mosquitto does), and a clean session's broker
// has no subscription of the client until onConnect renews them, while
// paho may already be sending the publications it kept. So after each
// reconnection, once the subscriptions are renewed, the client publishes
// a fence through the feeder, in order with the publications, on a topic
// of its own that it subscribes to: the fence's number is higher than any
// publication handed over before it, and the broker sends the fence after
// the echoes of those. When the fence comes back through the intake, the
// echoes still awaited of publications handed over before it will not
// come, unless the session keeps them.
//
// The same topic carries the drain marks of LeaveShared. Each client
// tells its own fences and marks from others' (a previous run's, kept by
// a persistent session, or another client's) by a random token.

// fenceTopic is the topic of the client's fences; %s is the client ID.
const fenceTopic = "robotexec/%s/fence"

// The payloads: TOKEN:fence:SEQ and TOKEN:drain:N.
const (
	fenceKind = "fence"
	drainKind = "drain"
)

func newToken() string { return strconv.FormatUint(rand.Uint64(), 36) }

// fenceMessage is a fence or a drain mark, whose payload hand writes.
func (c *Client) fenceMessage(kind string) outgoing {
	return outgoing{m: subscribers.Message{Topic: c.cfg.fence}, mark: kind}
}

// markPayload returns the payload of a mark of kind with number n.
func (c *Client) markPayload(kind string, n uint64) []byte {
	return fmt.Appendf(nil, "%s:%s:%d", c.token, kind, n)
}

// publishFence queues the fence of a new connection.
func (c *Client) publishFence() {
	if err := c.enqueue(c.fenceMessage(fenceKind)); err != nil {
		c.log.Debug("mqtt: fence not published; the next connection's will do", "error", err)
	}
}

// takeFence handles m if it is on the fence's topic, and reports whether
// it was: a fence of this client fences the router, a drain mark of this
// client ends the wait of LeaveShared, anything else is ignored.
func (c *Client) takeFence(m *subscribers.Message) bool {
	if m.Topic != c.cfg.fence {
		return false
	}
	token, rest, _ := strings.Cut(string(m.Payload), ":")
	kind, num, _ := strings.Cut(rest, ":")
	n, err := strconv.ParseUint(num, 10, 64)
	if token != c.token || err != nil {
		return true
	}
	switch kind {
	case fenceKind:
		c.router.Fence(n, c.cfg.CleanSession)
	case drainKind:
		c.drained.Store(n)
	}
	return true
}

// drain waits until everything the broker sent before it received a drain
// mark, published now, has passed through the intake, or ctx ends.
func (c *Client) drain(ctx context.Context) error {
	if c.fenceOff.Load() {
		return nil // no mark would come back
	}
	n := c.drains.Add(1)
	g := c.fenceMessage(drainKind)
	g.num = n
	if err := c.enqueue(g); err != nil {
		return err
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for c.drained.Load() < n {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.stop:
			return ErrClosed
		}
	}
	return nil
}
