package mqtt

import (
	"context"
	"errors"
	"time"
)

// Close publishes the offline status (when connected), disconnects, and
// stops the client's goroutines. Messages received and not yet handed to
// subscriptions are not acknowledged, so a persistent session receives them
// again. Close is idempotent: a second call, of Close or Shutdown,
// returns the first's result, nil, or what it gave up waiting for
// (ErrUnsent, ErrUnacknowledged, ErrBackground, ErrIntakeHeld, joined). It
// waits for the client's own goroutines, up to 2 s at each step.
//
// A subscription with the Block policy that stays full holds the intake
// goroutine until the subscription closes; Close waits for it up to 2 s
// and then returns ErrIntakeHeld, leaving it to end when the subscription
// closes.
func (c *Client) Close() error { return c.closeOnce(context.Background(), closeWait) }

// Shutdown is Close with its waits ending at ctx's end instead of
// after 2 s each: the queued publications, their acknowledgements, the
// offline status, the client's background publications and the intake
// goroutine are each waited for until ctx ends. What is left then is
// given up as Close gives it up: the connection is closed all the same,
// and the error joins the sentinel of each step not finished (ErrUnsent,
// ErrUnacknowledged, ErrBackground, ErrIntakeHeld) with ctx.Err(). A
// ctx without a deadline waits as long as those steps take. It is
// idempotent with Close: whichever is called first decides the result.
func (c *Client) Shutdown(ctx context.Context) error { return c.closeOnce(ctx, 0) }

// closeOnce runs close once; step, when not 0, also bounds each wait.
func (c *Client) closeOnce(ctx context.Context, step time.Duration) error {
	c.closeDo.Do(func() { c.closeErr = c.close(ctx, step) })
	return c.closeErr
}

// Errors of Close and Shutdown: what they gave up waiting for.
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

func (c *Client) close(ctx context.Context, step time.Duration) error {
	var errs []error
	giveUp := func(err error) {
		c.log.Warn(err.Error(), "broker", c.Broker())
		errs = append(errs, err)
	}
	// The publications queued so far go to the connection first.
	c.closeOutbound()
	if !waitClosed(ctx, c.out.done, step) {
		giveUp(ErrUnsent)
	}
	// A publication written but not acknowledged would be lost with a
	// clean session (robotexec play's last messages).
	if l := c.current(); l != nil {
		sctx, cancel := stepContext(ctx, step)
		if !l.flushed(sctx) {
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
		c.sayOffline(ctx, step, l)
	}
	if !c.waitBackground(ctx, step) {
		giveUp(ErrBackground)
	}
	if l != nil {
		l.close()
	}
	if !waitClosed(ctx, c.intakeDone, step) {
		giveUp(ErrIntakeHeld)
	}
	if len(errs) > 0 && ctx.Err() != nil {
		errs = append(errs, ctx.Err())
	}
	return errors.Join(errs...)
}

// sayOffline publishes the offline status before disconnecting.
func (c *Client) sayOffline(ctx context.Context, step time.Duration, l link) {
	c.statusMu.Lock()
	defer c.statusMu.Unlock()
	if c.cfg.StatusTopic != "" {
		sctx, cancel := stepContext(ctx, step)
		c.publishStatus(sctx, l, StatusOffline, nil)
		cancel()
	}
}

// stepContext returns ctx, bounded by step when step is not 0.
func stepContext(ctx context.Context, step time.Duration) (context.Context, context.CancelFunc) {
	if step == 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, step)
}

// waitClosed waits for ch to be closed until ctx ends, and at most step
// when step is not 0. A channel already closed counts even if ctx ended.
func waitClosed(ctx context.Context, ch <-chan struct{}, step time.Duration) bool {
	sctx, cancel := stepContext(ctx, step)
	defer cancel()
	select {
	case <-ch:
		return true
	case <-sctx.Done():
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
}
