package executor_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// TestPublishFromGoroutineOfCallback: a callback starts a goroutine that
// publishes 5 messages, with a context of its own, into a Block queue of
// depth 2 whose consumer holds its first message (and into a second
// subscription with room), and keeps running while the goroutine
// publishes, then until the second subscription has them all. The
// goroutine's publications follow an outside publisher's rules although
// the callback runs meanwhile: the fourth waits for room (the queue never
// holds more than its depth), none is dropped, and no callback is muted.
// Publications under the callback's context go past the depth and mute it
// (TestMuteKeepsAFastProducerBoundedWithoutDrops).
func TestPublishFromGoroutineOfCallback(t *testing.T) {
	obs := &muteCounter{}
	ex := executor.New(executor.Options{Workers: 2, Logger: quiet(), Observer: obs})
	bus := new(subscribers.Router)
	const depth, n = 2, 5
	release := make(chan struct{})
	var sub *subscribers.Subscription
	var maxLen, consumed atomic.Int64
	sub, err := ex.NewOwner("consumer", nil).Subscribe(bus, "work", func(ctx context.Context, _ subscribers.Message) {
		if consumed.Add(1) == 1 {
			<-release
		}
		maxLen.Store(max(maxLen.Load(), int64(sub.Len())))
	}, executor.Depth(depth), executor.Overflow(subscribers.Block))
	require.NoError(t, err)
	// A second subscription to the topic, with room, gets each of the
	// goroutine's publications while the callback waits for them.
	var watched atomic.Int64
	_, err = ex.NewOwner("watcher", nil).Subscribe(bus, "work", func(ctx context.Context, _ subscribers.Message) { watched.Add(1) },
		executor.Depth(2*n), executor.Overflow(subscribers.Block))
	require.NoError(t, err)

	producer := ex.NewOwner("producer", nil)
	pub, err := bus.Publisher("work")
	require.NoError(t, err)
	fourth := make(chan struct{})   // the goroutine is about to publish the fourth
	finished := make(chan struct{}) // it published all
	var overfilled atomic.Bool
	_, err = producer.OneShot(0, func(ctx context.Context, _ timers.Event) {
		go func() {
			defer close(finished)
			for i := range n {
				if i == 3 {
					close(fourth)
				}
				assert.NoError(t, pub.Publish(context.Background(), []byte{byte(i)}))
			}
		}()
		// Stay in the callback while the goroutine publishes into the
		// full queue: an overfill shows at once, a wait leaves the queue
		// at its depth.
		<-fourth
		for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end) && !overfilled.Load(); {
			overfilled.Store(sub.Len() > depth)
			time.Sleep(time.Millisecond)
		}
		close(release)
		<-finished
		for deadline := time.Now().Add(20 * time.Second); watched.Load() < n && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	})
	require.NoError(t, err)

	stop := run(t, ex)
	select {
	case <-finished:
	case <-time.After(20 * time.Second):
		t.Fatal("the goroutine's publications did not all return")
	}
	for deadline := time.Now().Add(10 * time.Second); consumed.Load() < n && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	stop()

	require.False(t, overfilled.Load(), "the goroutine's publication went past the queue's depth")
	require.LessOrEqual(t, maxLen.Load(), int64(depth))
	require.EqualValues(t, n, consumed.Load(), "every publication ran")
	require.EqualValues(t, n, watched.Load(), "and reached the second subscription while the callback waited")
	st := sub.Stats()
	require.Zero(t, st.DroppedTotal())
	require.EqualValues(t, n, st.Accepted)
	require.Zero(t, obs.mutes.Load(), "no callback was muted")
	require.NoError(t, tracecheck.Check(obs.Steps(), tracecheck.Model{Workers: 2, Drained: true, Batch: executor.DefaultBatch}))
}

// TestFirstPublisherMadeInCallback: a callback that makes its owner's first
// publisher (as a node publishing on a topic known only at run time does)
// and publishes into a full Block queue at once is a callback publishing:
// it goes past the depth instead of waiting, which, on the executor's only
// worker, would wait for ever for the consumer.
func TestFirstPublisherMadeInCallback(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 1, Logger: quiet()})
	bus := new(subscribers.Router)
	var consumed atomic.Int64
	sub, err := ex.NewOwner("consumer", nil).Subscribe(bus, "work", func(ctx context.Context, _ subscribers.Message) { consumed.Add(1) },
		executor.Depth(1), executor.Overflow(subscribers.Block))
	require.NoError(t, err)
	_, err = bus.Publish(context.Background(), subscribers.Message{Topic: "work"}) // the queue is full
	require.NoError(t, err)
	producer := ex.NewOwner("producer", nil)
	published := make(chan error, 1)
	_, err = producer.OneShot(0, func(ctx context.Context, _ timers.Event) {
		pub, err := bus.Publisher("work")
		if err == nil {
			err = pub.Publish(ctx, []byte("x"))
		}
		published <- err
	})
	require.NoError(t, err)

	stop := run(t, ex)
	select {
	case err := <-published:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("the callback's publication waited for a consumer that needs its worker")
	}
	for deadline := time.Now().Add(10 * time.Second); consumed.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	stop()
	require.EqualValues(t, 2, consumed.Load())
	require.Zero(t, sub.Stats().DroppedTotal())
}
