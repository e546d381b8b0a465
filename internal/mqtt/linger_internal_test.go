package mqtt

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lingerReturns runs a linger of d on o and returns a channel closed when
// it returns.
func lingerReturns(o *outbound, d time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		var lt lingerTimer
		lt.linger(o, d)
		close(done)
	}()
	return done
}

// A linger lasts its duration; MaxLingerBatch publications or a close end
// it at once; a hurry left from an earlier batch does not.
func TestLinger(t *testing.T) {
	const long = time.Minute
	push := func(o *outbound, n int) {
		o.mu.Lock()
		for range n {
			o.push(outgoing{})
		}
		o.mu.Unlock()
	}
	t.Run("full", func(t *testing.T) {
		var o outbound
		o.init()
		done := lingerReturns(&o, long)
		push(&o, MaxLingerBatch-1)
		requireLingering(t, done)
		push(&o, 1)
		requireWithin(t, done, "the batch's last publication")
	})
	t.Run("closed", func(t *testing.T) {
		var o outbound
		o.init()
		done := lingerReturns(&o, long)
		push(&o, 1)
		requireLingering(t, done)
		o.close()
		requireWithin(t, done, "the close")
	})
	t.Run("already full", func(t *testing.T) {
		var o outbound
		o.init()
		push(&o, MaxLingerBatch+1)
		requireWithin(t, lingerReturns(&o, long), "a full queue")
	})
	t.Run("stale hurry", func(t *testing.T) {
		var o outbound
		o.init()
		push(&o, MaxLingerBatch) // hurries
		o.q = o.q[:0]            // the feeder took them
		const d = 100 * time.Millisecond
		start := time.Now()
		var lt lingerTimer
		lt.linger(&o, d)
		require.GreaterOrEqual(t, time.Since(start), d, "ended by the earlier batch's hurry")
		// The timer, made once, serves the next linger too.
		start = time.Now()
		lt.linger(&o, d)
		require.GreaterOrEqual(t, time.Since(start), d)
	})
	t.Run("zero", func(t *testing.T) {
		var o outbound
		o.init()
		requireWithin(t, lingerReturns(&o, 0), "no linger")
	})
}

// requireLingering fails the test if the linger ends within 50 ms: it
// waits, and the step after this one is what ends it.
func requireLingering(t *testing.T, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
		t.Fatal("the linger ended before its end was due")
	case <-time.After(50 * time.Millisecond):
	}
}

func requireWithin(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the linger did not end at %s", what)
	}
}
