package mqtt_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
)

// Messages from a second client reach an executor callback through the
// client, in order per topic, at each QoS; topics outside the filter do
// not.
func TestEndToEndThroughExecutor(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		for _, qos := range []byte{0, 1, 2} {
			t.Run(fmt.Sprintf("qos%d", qos), func(t *testing.T) {
				c := dial(t, b.URL(), mqtt.Config{QoS: qos})
				ex := executor.New(executor.Options{Workers: 2})
				o := ex.NewOwner("n", nil)
				rec := newRecorder()
				_, err := o.Subscribe(c, "sensors/+/imu", rec.add,
					executor.Depth(64), executor.Overflow(subscribers.Block))
				require.NoError(t, err)
				startExecutor(t, ex)

				pub := rawClient(t, b.URL())
				const n = 200
				before := time.Now()
				for i := range n {
					for _, topic := range []string{"sensors/left/imu", "sensors/right/imu", "sensors/left/gps"} {
						tok := pub.Publish(topic, qos, false, fmt.Sprintf("%s#%d", topic, i))
						if qos == 2 {
							// mosquitto 2.0.11 loses QoS 2 messages that a
							// client publishes before the previous one
							// completed (eclipse-mosquitto/mosquitto#3056).
							require.True(t, tok.WaitTimeout(waitFor))
							require.NoError(t, tok.Error())
						}
					}
				}
				msgs := rec.waitCount(t, 2*n)
				next := map[string]int{}
				for _, m := range msgs {
					require.NotEqual(t, "sensors/left/gps", m.Topic)
					require.Equal(t, next[m.Topic], seqOf(t, m.Payload), "order on %s", m.Topic)
					next[m.Topic]++
					require.Equal(t, qos, m.QoS)
					require.False(t, m.Retained)
					require.False(t, m.Received.Before(before), "Received %v before the publication at %v", m.Received, before)
				}
				require.Equal(t, map[string]int{"sensors/left/imu": n, "sensors/right/imu": n}, next)
				st := c.Stats()
				require.Zero(t, st.ConnectionLosses)
				require.EqualValues(t, 2*n, st.Delivered)
			})
		}
	})
}

// A subscription with a lower QoS than the publication gets the lower one;
// Client.QoS picks a subscription's QoS.
func TestSubscriptionQoSView(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{})
	c := dial(t, b.URL(), mqtt.Config{QoS: 0})
	ex := executor.New(executor.Options{Workers: 1})
	o := ex.NewOwner("n", nil)
	q0, q2 := newRecorder(), newRecorder()
	_, err := o.Subscribe(c, "a/q0", q0.add)
	require.NoError(t, err)
	_, err = o.Subscribe(c.QoS(2), "a/q2", q2.add)
	require.NoError(t, err)
	_, err = o.Subscribe(c.QoS(3), "a/bad", q2.add)
	require.ErrorContains(t, err, "QoS 3")
	startExecutor(t, ex)

	pub := rawClient(t, b.URL())
	publish(t, pub, "a/q0", 2, false, "x")
	publish(t, pub, "a/q2", 2, false, "y")
	require.Equal(t, byte(0), q0.waitCount(t, 1)[0].QoS)
	require.Equal(t, byte(2), q2.waitCount(t, 1)[0].QoS)
}

// A retained message reaches a subscription made later, marked Retained.
// The embedded broker acknowledges a publication before it passes it to
// the subscriptions, so a subscription made right after the publisher's
// acknowledgement may also get the live copy, unmarked, and first.
func TestRetainedMessage(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		pub := rawClient(t, b.URL())
		publish(t, pub, "config/robot", 1, true, "v1")

		c := dial(t, b.URL(), mqtt.Config{QoS: 1})
		ex := executor.New(executor.Options{Workers: 1})
		rec := newRecorder()
		_, err := ex.NewOwner("n", nil).Subscribe(c, "config/#", rec.add)
		require.NoError(t, err)
		startExecutor(t, ex)
		msgs := rec.waitUntil(t, "the retained copy", func(ms []subscribers.Message) bool {
			return slices.ContainsFunc(ms, func(m subscribers.Message) bool { return m.Retained })
		})
		require.LessOrEqual(t, len(msgs), 2, "the retained copy, and at most the live one")
		for _, m := range msgs {
			require.Equal(t, "v1", string(m.Payload))
		}
	})
}

// A callback that republishes through the same client (a bridge) never
// deadlocks, with Publish or with PublishWait.
func TestPublishFromCallback(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		c := dial(t, b.URL(), mqtt.Config{QoS: 1})
		out, err := c.Publisher("bridge/out", bus.WithQoS(1))
		require.NoError(t, err)
		ex := executor.New(executor.Options{Workers: 2})
		o := ex.NewOwner("bridge", nil)
		errs := make(chan error, 1000)
		_, err = o.Subscribe(c, "bridge/in/+", func(ctx context.Context, m subscribers.Message) {
			if m.Topic == "bridge/in/wait" {
				ctx, cancel := context.WithTimeout(context.Background(), waitFor)
				defer cancel()
				errs <- c.PublishWait(ctx, msgOf(out, m.Payload))
				return
			}
			errs <- out.Publish(ctx, m.Payload)
		}, executor.Depth(10), executor.Overflow(subscribers.Block))
		require.NoError(t, err)
		startExecutor(t, ex)

		got := make(chan string, 1000)
		obs := rawClient(t, b.URL())
		tok := obs.Subscribe("bridge/out", 1, func(_ paho.Client, m paho.Message) { got <- string(m.Payload()) })
		require.True(t, tok.WaitTimeout(waitFor))
		require.NoError(t, tok.Error())

		pub := rawClient(t, b.URL())
		const n = 300
		for i := range n {
			topic := "bridge/in/fast"
			if i%10 == 0 {
				topic = "bridge/in/wait"
			}
			pub.Publish(topic, 1, false, fmt.Sprint(i))
		}
		timeout := time.After(waitFor)
		for i := 0; i < n; {
			select {
			case p := <-got:
				require.Equal(t, fmt.Sprint(i), p)
				i++
			case err := <-errs:
				require.NoError(t, err)
			case <-timeout:
				t.Fatalf("bridge forwarded %d of %d messages", i, n)
			}
		}
		for len(errs) > 0 {
			require.NoError(t, <-errs)
		}
	})
}

// Shared subscriptions split one topic's messages between two clients:
// each message reaches exactly one of them.
func TestSharedSubscription(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		ex := executor.New(executor.Options{Workers: 2})
		o := ex.NewOwner("n", nil)
		recs := []*recorder{newRecorder(), newRecorder()}
		for _, rec := range recs {
			c := dial(t, b.URL(), mqtt.Config{QoS: 1})
			_, err := o.Subscribe(c, "$share/workers/jobs/+", rec.add,
				executor.Depth(1000), executor.Overflow(subscribers.Block))
			require.NoError(t, err)
		}
		startExecutor(t, ex)
		pub := rawClient(t, b.URL())
		const n = 100
		for i := range n {
			publish(t, pub, "jobs/x", 1, false, fmt.Sprint(i))
		}
		seen := map[int]int{}
		eventually(t, "every job delivered", func() bool {
			return len(recs[0].snapshot())+len(recs[1].snapshot()) >= n
		})
		for _, rec := range recs {
			for _, m := range rec.snapshot() {
				require.Equal(t, "jobs/x", m.Topic)
				seen[seqOf(t, m.Payload)]++
			}
		}
		require.Len(t, seen, n)
		for i, k := range seen {
			require.Equal(t, 1, k, "job %d delivered %d times", i, k)
		}
	})
}

// With a clean session, closing a subscription unsubscribes its filter
// when no other subscription uses it; with a persistent session the broker
// keeps the subscription and later messages are counted as unrouted.
func TestDetach(t *testing.T) {
	for _, clean := range []bool{true, false} {
		t.Run(fmt.Sprintf("clean=%v", clean), func(t *testing.T) {
			b := mqtttest.Embedded(t, broker.Config{})
			c := dial(t, b.URL(), mqtt.Config{QoS: 1, CleanSession: clean})
			ex := executor.New(executor.Options{Workers: 1})
			o := ex.NewOwner("n", nil)
			a1, a2, marker := newRecorder(), newRecorder(), newRecorder()
			s1, err := o.Subscribe(c, "a/#", a1.add)
			require.NoError(t, err)
			s2, err := o.Subscribe(c, "a/#", a2.add)
			require.NoError(t, err)
			_, err = o.Subscribe(c, "marker", marker.add)
			require.NoError(t, err)
			startExecutor(t, ex)
			pub := rawClient(t, b.URL())

			s1.Close() // s2 still uses a/#
			publish(t, pub, "a/1", 1, false, "1")
			a2.waitCount(t, 1)
			s2.Close()
			// The client's own publication, acknowledged, comes after its
			// UNSUBSCRIBE on the same connection.
			p, err := c.Publisher("sync", bus.WithQoS(1))
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			require.NoError(t, c.PublishWait(ctx, msgOf(p, []byte("x"))))
			publish(t, pub, "a/2", 1, false, "2")
			publish(t, pub, "marker", 1, false, "m")
			marker.waitCount(t, 1)
			require.Empty(t, a1.snapshot())
			require.Len(t, a2.snapshot(), 1)
			st := c.Stats()
			if clean {
				require.Zero(t, st.Unrouted)
			} else {
				require.EqualValues(t, 1, st.Unrouted)
			}
		})
	}
}
