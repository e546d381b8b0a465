package mqtt

// reassertOnline publishes the online status again when the client sees
// its status read offline while it is connected: the broker may publish
// the last will of a connection it has just replaced after the new
// connection said online (mochi does, when the client reconnects before
// the broker noticed the old connection's end). It runs in paho's router
// goroutine, so the publication runs in a goroutine of its own.
func (c *Client) reassertOnline() {
	if c.closed.Load() || !c.pc.IsConnectionOpen() || !c.reasserting.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer c.reasserting.Store(false)
		// Close takes statusMu before its offline publication, so this
		// one never follows it.
		c.statusMu.Lock()
		defer c.statusMu.Unlock()
		if c.closed.Load() {
			return
		}
		tok := c.pc.Publish(c.cfg.StatusTopic, 0, true, StatusOnline)
		_ = c.wait(tok, c.cfg.WriteTimeout)
	}()
}
