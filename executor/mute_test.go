package executor_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// muteCounter counts mutes and unmutes beside a trace recorder.
type muteCounter struct {
	tracecheck.Recorder
	mutes, unmutes atomic.Int64
}

func (m *muteCounter) Observe(ev trace.Event) {
	switch ev.Op {
	case trace.Mute:
		m.mutes.Add(1)
	case trace.Unmute:
		m.unmutes.Add(1)
	}
	m.Recorder.Observe(ev)
}

// TestMuteKeepsAFastProducerBoundedWithoutDrops: a timer publishing at 1
// kHz into a slow consumer with the Block policy: the producer is muted
// while the consumer's queue is full, so the queue stays within its depth
// plus one publication, nothing is dropped, and the producer resumes.
func TestMuteKeepsAFastProducerBoundedWithoutDrops(t *testing.T) {
	obs := &muteCounter{}
	ex := executor.New(executor.Options{Workers: 2, Logger: quiet(), Observer: obs})
	bus := new(subscribers.Router)
	const depth = 5
	var maxLen atomic.Int64
	var consumed atomic.Int64
	var sub *subscribers.Subscription
	consumer := ex.NewOwner("consumer", nil)
	sub, err := consumer.Subscribe(bus, "work", func(ctx context.Context, _ subscribers.Message) {
		if n := int64(sub.Len()); n > maxLen.Load() {
			maxLen.Store(n)
		}
		time.Sleep(2 * time.Millisecond)
		consumed.Add(1)
	}, executor.Depth(depth), executor.Overflow(subscribers.Block))
	require.NoError(t, err)

	producer := ex.NewOwner("producer", nil)
	pub, err := bus.Publisher("work")
	require.NoError(t, err)
	require.Equal(t, "work", pub.Topic())
	var produced atomic.Int64
	_, err = producer.Timer(200*time.Microsecond, func(ctx context.Context, _ timers.Event) {
		// A publication made during the drain is refused by the closed
		// consumer (n == 0) or, once it is detached, reaches nobody.
		if n, _ := pub.PublishMessage(ctx, subscribers.Message{Payload: []byte("job")}); n == 1 {
			produced.Add(1)
		}
	})
	require.NoError(t, err)

	stop := run(t, ex)
	deadline := time.Now().Add(20 * time.Second)
	for consumed.Load() < 60 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop()

	require.GreaterOrEqual(t, consumed.Load(), int64(60), "the consumer kept working")
	require.Positive(t, obs.mutes.Load(), "the producer was muted")
	require.Equal(t, obs.mutes.Load(), obs.unmutes.Load(), "and unmuted each time")
	require.LessOrEqual(t, maxLen.Load(), int64(depth+1), "the queue stays bounded")
	st := sub.Stats()
	// Publications refused at the stop by the closed consumer are counted
	// as Closed, by design; the mute must never drop for a full queue.
	require.Zero(t, st.Dropped[subscribers.QueueFull], "nothing dropped for a full queue")
	require.Equal(t, st.DroppedTotal(), st.Dropped[subscribers.Closed], "every other drop is the stop's")
	require.Equal(t, produced.Load(), int64(st.Accepted), "every publication accepted")
	require.Equal(t, consumed.Load(), int64(st.Accepted), "and run: the drain ran the mute's backlog")
	require.NoError(t, tracecheck.Check(obs.Steps(), tracecheck.Model{Workers: 2, Drained: true, Batch: executor.DefaultBatch}))
}

// TestMuteSkipsCycles: a subscription that publishes to itself is not
// muted by its own queue, so a cycle drains.
func TestMuteSkipsCycles(t *testing.T) {
	obs := &muteCounter{}
	ex := executor.New(executor.Options{Logger: quiet(), Observer: obs})
	bus := new(subscribers.Router)
	o := ex.NewOwner("loop", nil)
	pub, err := bus.Publisher("loop")
	require.NoError(t, err)
	hops := 0
	_, err = o.Subscribe(bus, "loop", func(ctx context.Context, _ subscribers.Message) {
		if hops++; hops < 50 {
			pub.Publish(ctx, nil)
			pub.Publish(ctx, nil)
		}
	}, executor.Depth(2), executor.Overflow(subscribers.Block))
	require.NoError(t, err)
	bus.Publish(context.Background(), subscribers.Message{Topic: "loop"})
	ex.SpinAll()
	require.Zero(t, obs.mutes.Load())
	require.Equal(t, 1+2*49, hops)
}

// TestMuteEndsAtShutdown stops the executor while a producer is muted: the
// consumer drains, the mute ends, Run returns.
func TestMuteEndsAtShutdown(t *testing.T) {
	obs := &muteCounter{}
	ex := executor.New(executor.Options{Workers: 2, Logger: quiet(), Observer: obs})
	bus := new(subscribers.Router)
	release := make(chan struct{})
	consumer := ex.NewOwner("consumer", nil)
	_, err := consumer.Subscribe(bus, "work", func(ctx context.Context, _ subscribers.Message) { <-release },
		executor.Depth(2), executor.Overflow(subscribers.Block))
	require.NoError(t, err)
	producer := ex.NewOwner("producer", nil)
	pub, err := bus.Publisher("work")
	require.NoError(t, err)
	_, err = producer.Timer(100*time.Microsecond, func(ctx context.Context, _ timers.Event) { pub.Publish(ctx, nil) })
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for obs.mutes.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.Positive(t, obs.mutes.Load())
	cancel()
	close(release)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return")
	}
	require.NoError(t, tracecheck.Check(obs.Steps(), tracecheck.Model{Workers: 2, Drained: true, Batch: executor.DefaultBatch}))
}
