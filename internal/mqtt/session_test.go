package mqtt_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
)

// runExecutor runs ex until the returned function is called, which waits
// for Run to return.
func runExecutor(t *testing.T, ex *executor.Executor) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(waitFor):
			t.Fatalf("executor did not stop within %v", waitFor)
		}
	}
	t.Cleanup(stop)
	return stop
}

// QoS 1 messages published while the robot is away wait in its persistent
// session; a client dialled paused holds them until its subscriptions are
// attached, so that none is lost for want of a subscription.
func TestPersistentSessionWhileAway(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		const n = 50
		id := clientID(t, "robot")
		c1 := dial(t, b.URL(), mqtt.Config{ClientID: id, QoS: 1})
		ex1 := executor.New(executor.Options{Workers: 1})
		_, err := ex1.NewOwner("n", nil).Subscribe(c1, "held/#", func(ctx context.Context, _ subscribers.Message) {})
		require.NoError(t, err)
		require.NoError(t, c1.Close()) // the session stays

		pub := rawClient(t, b.URL())
		for i := range n {
			publish(t, pub, "held/x", 1, false, fmt.Sprint(i))
		}

		c2 := dialNoWait(t, b.URL(), mqtt.Config{ClientID: id, QoS: 1, StartPaused: true})
		// mosquitto sends 20 (max_inflight_messages) and waits for their
		// acknowledgements; mochi sends them all.
		eventually(t, "queued messages held", func() bool { return c2.Stats().Pending >= 20 })
		ex2 := executor.New(executor.Options{Workers: 1})
		rec := newRecorder()
		_, err = ex2.NewOwner("n", nil).Subscribe(c2, "held/#", rec.add, executor.Depth(n))
		require.NoError(t, err)
		runExecutor(t, ex2)
		c2.Resume()
		msgs := rec.waitCount(t, n)
		d, _ := received(t, msgs, n)
		require.Equal(t, n, d)
		require.Zero(t, c2.Stats().Unrouted)
	})
}

// A robot restarts in the middle of a QoS 1 stream: Pause before stopping
// the executor, Close, and a new client on the same session (dialled
// paused) picks up where the old one stopped. Every message arrives.
func TestRestartMidStreamLosesNothing(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		const n = 400
		id := clientID(t, "robot")
		rec := newRecorder()
		start := func(cfg mqtt.Config) (*mqtt.Client, func()) {
			cfg.ClientID, cfg.QoS = id, 1
			c := dialNoWait(t, b.URL(), cfg)
			ex := executor.New(executor.Options{Workers: 2})
			_, err := ex.NewOwner("n", nil).Subscribe(c, "s/#", rec.add,
				executor.Depth(10), executor.Overflow(subscribers.Block))
			require.NoError(t, err)
			stop := runExecutor(t, ex)
			c.Resume()
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			require.NoError(t, c.WaitConnected(ctx))
			return c, stop
		}
		c1, stop1 := start(mqtt.Config{StartPaused: true})
		done := stream(t, b.URL(), "s/x", n)
		rec.waitCount(t, 100)

		c1.Pause()
		stop1() // drains what the subscription accepted
		// Messages keep coming until the client closes; none of them
		// may be acknowledged.
		got := c1.Stats().Received
		eventually(t, "messages after the executor stopped", func() bool { return c1.Stats().Received >= got+5 })
		require.NoError(t, c1.Close())
		start(mqtt.Config{StartPaused: true})

		msgs := rec.waitUntil(t, "every message", func(m []subscribers.Message) bool {
			d, _ := received(t, m, n)
			return d == n
		})
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(waitFor):
			t.Fatal("publisher did not finish")
		}
		_, dups := received(t, msgs, n)
		t.Logf("%d messages over two clients, all arrived; %d duplicates", n, dups)
	})
}
