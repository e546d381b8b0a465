package mqtt

import (
	"strconv"

	"github.com/robotexec/robotexec/subscribers"
)

// The fence tells the router which echoes a lost connection took with it
// (see subscribers.Router.ConnectionLost). A broker may send on the next
// connection of a persistent session what it had queued for the client
// when the connection was lost, QoS 0 messages included (mosquitto does):
// the echoes of publications made on the lost connection may still come
// after reconnecting. So after each reconnection, once its subscriptions
// are renewed, the client publishes a fence on a topic of its own, which
// it subscribes to; the broker sends it after whatever it had queued
// before, and when the fence comes back through the intake, the echoes
// that have not come by then will not.

// fenceTopic is the fence's topic; %s is the client ID.
const fenceTopic = "robotexec/%s/fence"

// publishFence publishes the fence of every connection before the current
// one, if the client matches echoes and has reconnected.
func (c *Client) publishFence() {
	conn := c.conn.Load()
	if c.cfg.fence == "" || conn == 0 {
		return
	}
	c.pc.Publish(c.cfg.fence, 0, false, strconv.FormatUint(conn-1, 10))
}

// takeFence handles m if it is the fence, and reports whether it was.
func (c *Client) takeFence(m *subscribers.Message) bool {
	if c.cfg.fence == "" || m.Topic != c.cfg.fence {
		return false
	}
	if conn, err := strconv.ParseUint(string(m.Payload), 10, 64); err == nil {
		c.router.ConnectionLost(conn, c.cfg.CleanSession)
	}
	return true
}
