package mqtt

import (
	"sync"
	"sync/atomic"

	"github.com/robotexec/robotexec/subscribers"
)

// maxEarly bounds the publications held before the first connection.
const maxEarly = 10000

// early holds the QoS 1 and 2 publications of the router made before the
// client's first connection, and sends them, in order, once it is
// connected and subscribed: as paho keeps those made while reconnecting, so
// that a process that starts before its broker loses none. QoS 0
// publications fail then, as while reconnecting.
type early struct {
	over atomic.Bool // the first connection came: publications go to paho

	mu   sync.Mutex
	msgs []subscribers.Message
}

// hold holds m if the first connection has not come yet; it reports
// whether it did, and fails with ErrNotConnected beyond maxEarly.
func (c *Client) hold(m *subscribers.Message) (bool, error) {
	e := &c.early
	if e.over.Load() || m.QoS == 0 {
		return false, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.over.Load():
		return false, nil
	case len(e.msgs) >= maxEarly:
		c.publishFailed.Add(1)
		return true, wrapPublish(m.Topic, ErrNotConnected)
	}
	e.msgs = append(e.msgs, *m)
	return true, nil
}

// sendEarly sends the held publications; onConnect calls it once the
// first connection has subscribed, so that their echoes come back (see
// subscribers.Router). Publications made meanwhile wait, and so keep their
// order behind the held ones.
func (c *Client) sendEarly() {
	e := &c.early
	if e.over.Load() {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range e.msgs {
		if _, err := c.send(&e.msgs[i]); err != nil {
			c.log.Warn("mqtt: a publication made before connecting failed", "topic", e.msgs[i].Topic, "error", err)
		}
	}
	e.msgs = nil
	e.over.Store(true)
}
