package executor_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// mutedIDs records the IDs of the entities muted, beside a trace
// recorder.
type mutedIDs struct {
	tracecheck.Recorder
	ids chan uint64
}

func (m *mutedIDs) Observe(ev trace.Event) {
	if ev.Op == trace.Mute {
		select {
		case m.ids <- ev.ID:
		default:
		}
	}
	m.Recorder.Observe(ev)
}

// blockedConsumer subscribes to topic with a Block queue of depth 1 whose
// callback holds its first message until release is closed; it returns
// the subscription.
func blockedConsumer(t *testing.T, ex *executor.Executor, bus *subscribers.Router, topic string, release chan struct{}) *subscribers.Subscription {
	t.Helper()
	var first atomic.Bool
	sub, err := ex.NewOwner("consumer", nil).Subscribe(bus, topic, func(context.Context, subscribers.Message) {
		if first.CompareAndSwap(false, true) {
			<-release
		}
	}, executor.Depth(1), executor.Overflow(subscribers.Block))
	require.NoError(t, err)
	return sub
}

// TestMuteGoesToThePublishingCallback: two timers of one owner in a
// reentrant group, one publishing into a full Block queue, then working on
// for a millisecond, the other not publishing and running meanwhile, so
// that it often ends first. The backpressure mutes exactly the publishing
// timer: every mute is its, and the other timer keeps its rate meanwhile.
func TestMuteGoesToThePublishingCallback(t *testing.T) {
	obs := &mutedIDs{ids: make(chan uint64, 1024)}
	ex := executor.New(executor.Options{Workers: 3, Logger: quiet(), Observer: obs})
	bus := new(subscribers.Router)
	release := make(chan struct{})
	blockedConsumer(t, ex, bus, "work", release)

	o := ex.NewOwner("node", ex.NewGroup("node", executor.Reentrant))
	pub, err := bus.Publisher("work")
	require.NoError(t, err)
	publisher, err := o.Timer(2*time.Millisecond, func(ctx context.Context, _ timers.Event) {
		assert.NoError(t, pub.Publish(ctx, nil))
		time.Sleep(time.Millisecond)
	})
	require.NoError(t, err)
	var quietRuns atomic.Int64
	_, err = o.Timer(time.Millisecond, func(context.Context, timers.Event) {
		quietRuns.Add(1)
		time.Sleep(200 * time.Microsecond)
	})
	require.NoError(t, err)

	stop := run(t, ex)
	select {
	case id := <-obs.ids:
		require.Equal(t, publisher.ID(), id, "the publishing timer is the one muted")
	case <-time.After(20 * time.Second):
		t.Fatal("no mute")
	}
	before := quietRuns.Load()
	time.Sleep(300 * time.Millisecond)
	ran := quietRuns.Load() - before
	close(release)
	stop()
	require.GreaterOrEqual(t, ran, int64(100), "the other timer kept its rate (1 kHz) while the publisher was muted")
	for len(obs.ids) > 0 {
		require.Equal(t, publisher.ID(), <-obs.ids, "every mute is the publishing timer's")
	}
	require.NoError(t, tracecheck.Check(obs.Steps(), tracecheck.Model{Workers: 3, Drained: true, Batch: executor.DefaultBatch}))
}

// TestGoroutinePublicationsAndTheRunsContext: a callback starts a
// goroutine. Publishing into a full Block queue with a context of its own,
// the goroutine waits for room (the queue never holds more than its
// depth) and, when that context is done, returns its error. Publishing
// with the callback's context after the callback returned, it is refused
// at once with that context's error: the run is over.
func TestGoroutinePublicationsAndTheRunsContext(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 2, Logger: quiet()})
	bus := new(subscribers.Router)
	release := make(chan struct{})
	sub := blockedConsumer(t, ex, bus, "work", release)
	pub, err := bus.Publisher("work")
	require.NoError(t, err)
	stop := run(t, ex)
	defer func() {
		close(release)
		stop()
	}()
	// The consumer holds its first message; the second fills its queue.
	require.NoError(t, pub.Publish(context.Background(), nil))
	for deadline := time.Now().Add(10 * time.Second); sub.Len() > 0; {
		require.True(t, time.Now().Before(deadline), "the consumer did not take its first message")
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, pub.Publish(context.Background(), nil))

	type result struct {
		own, kept error
		waited    time.Duration
		len       int
	}
	results := make(chan result, 1)
	_, err = ex.NewOwner("producer", nil).OneShot(0, func(ctx context.Context, _ timers.Event) {
		go func() {
			var r result
			start := time.Now() // before the context: see TestPublishWaitsUnderItsContext
			own, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			r.own = pub.Publish(own, nil)
			r.waited = time.Since(start)
			r.len = sub.Len()
			<-ctx.Done() // the callback has returned
			r.kept = pub.Publish(ctx, nil)
			results <- r
		}()
	})
	require.NoError(t, err)
	var r result
	select {
	case r = <-results:
	case <-time.After(20 * time.Second):
		t.Fatal("the goroutine did not return")
	}
	require.ErrorIs(t, r.own, context.DeadlineExceeded, "its own context's error")
	require.GreaterOrEqual(t, r.waited, 200*time.Millisecond, "it waited for room until its context was done")
	require.Equal(t, 1, r.len, "the queue held no more than its depth")
	require.True(t, errors.Is(r.kept, context.Canceled), "the ended run's context refuses: %v", r.kept)
	require.EqualValues(t, 2, sub.Stats().Accepted, "neither goroutine publication was accepted")
}
