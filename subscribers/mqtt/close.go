package mqtt

import (
	"context"
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
// closes.
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
	// The publications queued so far go to the connection first.
	c.closeOutbound()
	if !waitClosed(c.out.done, closeWait) {
		giveUp(ErrUnsent)
	}
	// A publication written but not acknowledged would be lost with a
	// clean session (robotexec play's last messages).
	if l := c.current(); l != nil {
		ctx, cancel := context.WithTimeout(context.Background(), closeWait)
		if !l.flushed(ctx) {
			giveUp(ErrUnacknowledged)
		}
		cancel()
	}
	c.mu.Lock()
	c.closed.Store(true)
	c.mu.Unlock()
	c.cancel()
	<-c.runDone
	// Read once run ended: a connection made as Close began is the
	// current one then, and is closed with the others' way.
	l := c.current()
	if l != nil {
		c.sayOffline(l)
	}
	if !c.waitBackground(closeWait) {
		giveUp(ErrBackground)
	}
	if l != nil {
		l.close()
	}
	if !waitClosed(c.intakeDone, closeWait) {
		giveUp(ErrIntakeHeld)
	}
	return errors.Join(errs...)
}

// sayOffline publishes the offline status before disconnecting.
func (c *Client) sayOffline(l link) {
	c.statusMu.Lock()
	defer c.statusMu.Unlock()
	if c.cfg.StatusTopic != "" {
		c.publishStatus(l, StatusOffline)
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
