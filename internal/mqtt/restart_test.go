package mqtt_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
)

// stream publishes "0".."n-1" at QoS 1 through a robotexec client, paced,
// retrying a publication that fails at once. It returns a channel that
// yields nil when done, or an error.
func stream(t *testing.T, url string, topic string, n int) <-chan error {
	c := dial(t, url, mqtt.Config{QoS: 1, ClientID: clientID(t, "pub"), WriteTimeout: 2 * time.Second})
	p, err := c.Publisher(topic, bus.WithQoS(1))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(waitFor)
		for i := 0; i < n; {
			if err := p.Publish(context.Background(), []byte(fmt.Sprint(i))); err != nil {
				if time.Now().After(deadline) {
					done <- fmt.Errorf("publish %d: %w", i, err)
					return
				}
				time.Sleep(20 * time.Millisecond)
				continue
			}
			i++
			time.Sleep(time.Millisecond)
		}
		done <- nil
	}()
	return done
}

// received returns how many distinct sequence numbers in 0..n-1 the
// recorder holds, and how many duplicates.
func received(t *testing.T, msgs []subscribers.Message, n int) (distinct, dups int) {
	seen := make(map[int]bool, n)
	for _, m := range msgs {
		s := seqOf(t, m.Payload)
		if seen[s] {
			dups++
		}
		seen[s] = true
	}
	return len(seen), dups
}

// lossless runs a QoS 1 stream into a persistent-session subscription
// through the executor and calls interrupt once part of it has arrived;
// every message must arrive, duplicates allowed (and reported).
func lossless(t *testing.T, subURL, pubURL string, interrupt func(), then func()) {
	const n = 1000
	c := dial(t, subURL, mqtt.Config{QoS: 1, ClientID: clientID(t, "sub"), MaxBackoff: 500 * time.Millisecond})
	ex := executor.New(executor.Options{Workers: 2})
	rec := newRecorder()
	_, err := ex.NewOwner("n", nil).Subscribe(c, "stream/#", rec.add,
		executor.Depth(100), executor.Overflow(subscribers.Block))
	require.NoError(t, err)
	startExecutor(t, ex)

	done := stream(t, pubURL, "stream/x", n)
	rec.waitCount(t, 200)
	interrupt()
	if then != nil {
		rec.waitUntil(t, "messages after the interruption", func(m []subscribers.Message) bool {
			return c.Stats().Reconnects >= 1 && len(m) >= 500
		})
		then()
	}
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
	st := c.Stats()
	require.GreaterOrEqual(t, st.Reconnects, uint64(1))
	t.Logf("%d messages, all arrived; %d duplicates; client stats %+v", n, dups, st)
}

// Mosquitto, with persistence, is stopped (SIGTERM) in the middle of a
// QoS 1 stream and started again on the same port: the subscriber's
// persistent session and the publisher's in-flight store lose nothing.
func TestBrokerRestartMidStream(t *testing.T) {
	t.Parallel()
	m := mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{Persistence: true})
	lossless(t, m.URL(), m.URL(), func() {
		pid := m.PID()
		m.Stop()
		m.Start()
		require.NotEqual(t, pid, m.PID())
	}, nil)
}

// The connection between subscriber and broker breaks twice in the middle
// of a QoS 1 stream (a proxy cuts it, without DISCONNECT): the broker keeps
// the session, the client reconnects, and every message arrives.
func TestConnectionCutMidStream(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		p := mqtttest.NewProxy(t, b.Addr())
		cut := func() { require.Positive(t, p.Cut()) }
		lossless(t, p.URL(), b.URL(), cut, cut)
	})
}

// The embedded broker keeps sessions in memory only, so its restart loses
// them: this checks the client's side of a restart instead. It reconnects
// and subscribes again (paho would not), and messages published after the
// restart arrive; the publisher's own client reconnects too.
func TestEmbeddedBrokerRestartResubscribes(t *testing.T) {
	t.Parallel()
	b := mqtttest.Embedded(t, broker.Config{})
	c := dial(t, b.URL(), mqtt.Config{QoS: 1, MaxBackoff: 500 * time.Millisecond})
	ex := executor.New(executor.Options{Workers: 1})
	rec := newRecorder()
	_, err := ex.NewOwner("n", nil).Subscribe(c, "r/+", rec.add)
	require.NoError(t, err)
	startExecutor(t, ex)
	pc := dial(t, b.URL(), mqtt.Config{MaxBackoff: 500 * time.Millisecond})
	p, err := pc.Publisher("r/a", bus.WithQoS(1))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()

	require.NoError(t, pc.PublishWait(ctx, msgOf(p, []byte("before"))))
	rec.waitCount(t, 1)
	b.Stop()
	b.Start()
	eventually(t, "both clients reconnected", func() bool {
		return c.Stats().Reconnects == 1 && c.Connected() && pc.Stats().Reconnects == 1 && pc.Connected()
	})
	require.NoError(t, pc.PublishWait(ctx, msgOf(p, []byte("after"))))
	msgs := rec.waitCount(t, 2)
	require.Equal(t, "after", string(msgs[1].Payload))
}
