package mqtt

import "time"

// Lingering: with Config.Linger, the feeder, woken by a publication,
// waits before it hands the queue to the connection, so that the
// publications of the next moments go in the same write. Each write wakes
// the broker, and each of its acknowledgements the client's reader: with
// the callbacks of a process keeping its CPUs busy, those wake-ups
// preempt the callbacks, and on a virtual machine every one of them costs
// a kernel entry and exit. A write per Linger instead of a write per
// publication leaves the callbacks their CPUs.

const (
	// MaxLinger is the longest Config.Linger.
	MaxLinger = time.Second
	// MaxLingerBatch is how many waiting publications end a linger at
	// once: a burst goes without waiting.
	MaxLingerBatch = 64
)

// lingerTimer is the feeder's timer for its lingers, made once.
type lingerTimer struct{ t *time.Timer }

// linger waits up to d, or until MaxLingerBatch publications wait in o or
// o is closed; it returns at once when d is 0 or they wait already.
func (lt *lingerTimer) linger(o *outbound, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-o.full: // an earlier batch's: this one is counted below
	default:
	}
	o.mu.Lock()
	now := len(o.q) >= MaxLingerBatch || o.closed
	o.mu.Unlock()
	if now {
		return
	}
	if lt.t == nil {
		lt.t = time.NewTimer(d)
	} else {
		lt.t.Reset(d)
	}
	select {
	case <-lt.t.C:
	case <-o.full:
		lt.t.Stop()
	}
}

// hurry ends a linger under way: MaxLingerBatch publications wait, or o is
// closing.
func (o *outbound) hurry() {
	select {
	case o.full <- struct{}{}:
	default:
	}
}
