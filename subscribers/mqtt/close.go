package mqtt

import (
	"errors"
	"time"
)

// Close publishes the offline status (when connected), disconnects, and
// stops the client's goroutines. Messages received and not yet handed to
// subscriptions are not acknowledged, so a persistent session receives them
// again. Close is idempotent: a second call returns the first's result,
// nil, or what it gave up waiting for (ErrUnsent, ErrUnacknowledged,
// ErrBackground, ErrIntakeHeld, joined). It waits for the client's own
// goroutines.
//
// A subscription with the Block policy that stays full holds the intake
// goroutine until the subscription closes; Close waits for it up to 2 s
// and then returns ErrIntakeHeld, leaving it to end when the subscription
// closes. Paho's own goroutines for an attempt to reconnect end once that
// attempt ends.
func (c *Client) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.close() })
	return c.closeErr
}

// Errors of Close: what it gave up waiting for, after closeWait each.
var (
	// ErrUnsent: the connection did not take the queued publications.
	ErrUnsent = errors.New("mqtt: close: the broker connection did not take the queued publications in time")
	// ErrUnacknowledged: the broker did not acknowledge the last QoS 1
	// or 2 publications (or the connection was down).
	ErrUnacknowledged = errors.New("mqtt: close: the broker did not acknowledge the last publications")
	// ErrBackground: a publication of the online status, made again
	// after the broker said offline, did not end.
	ErrBackground = errors.New("mqtt: close: the online status's publication did not end in time")
	// ErrIntakeHeld: a full subscription with the Block policy holds the
	// delivery of a message; it ends when the subscription closes.
	ErrIntakeHeld = errors.New("mqtt: close: a full subscription with the block policy holds the delivery of a message")
)

func (c *Client) close() error {
	var errs []error
	giveUp := func(err error) {
		c.log.Warn(err.Error(), "broker", c.cfg.display)
		errs = append(errs, err)
	}
	// The publications queued so far go to paho first.
	c.closeOutbound()
	if !waitClosed(c.out.done, closeWait) {
		giveUp(ErrUnsent)
	}
	// A publication paho has written but the broker has not
	// acknowledged would be lost by the DISCONNECT with a clean session
	// (robotexec play's last messages).
	if !c.waitAcknowledged(closeWait) {
		giveUp(ErrUnacknowledged)
	}
	c.mu.Lock()
	c.closed.Store(true)
	c.mu.Unlock()
	close(c.stop)
	<-c.connectDone
	c.sayOffline()
	if !c.waitBackground(closeWait) {
		giveUp(ErrBackground)
	}
	c.pc.Disconnect(disconnectQuiesce)
	if !waitClosed(c.intakeDone, closeWait) {
		giveUp(ErrIntakeHeld)
	}
	return errors.Join(errs...)
}

// sayOffline publishes the offline status before disconnecting.
func (c *Client) sayOffline() {
	c.statusMu.Lock()
	defer c.statusMu.Unlock()
	if c.cfg.StatusTopic != "" && c.pc.IsConnectionOpen() {
		// QoS 0 completes once written, before the DISCONNECT that
		// follows on the same connection.
		tok := c.pc.Publish(c.cfg.StatusTopic, 0, true, StatusOffline)
		waitClosed(tok.Done(), closeWait)
	}
}

// waitClosed waits at most d for ch to be closed.
func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
