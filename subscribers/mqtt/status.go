package mqtt

import "time"

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
		tok := c.pc.Publish(c.cfg.StatusTopic, 0, true, StatusOnline)
		_ = c.wait(tok, c.cfg.WriteTimeout)
	}()
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

// waitBackground waits, at most d, for the goroutines counted by
// background; none is started after it.
func (c *Client) waitBackground(d time.Duration) bool {
	c.bgMu.Lock()
	c.bgDone = true
	c.bgMu.Unlock()
	done := make(chan struct{})
	go func() {
		c.bg.Wait()
		close(done)
	}()
	return waitClosed(done, d)
}
