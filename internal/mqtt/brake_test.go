package mqtt_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
)

// TestBrakeBoundsOutbound: a bridge republishes a burst of 3,000 QoS 1
// messages through mosquitto, which takes one unacknowledged publication
// at a time (max_inflight_messages 1, its Receive Maximum to the client)
// while it sends the burst as fast as it comes. The publications waiting
// for the broker stay near 1,024 (the intake stops handing messages over
// past it, the burst waiting at the broker), none is lost, and each topic
// keeps its order.
func TestBrakeBoundsOutbound(t *testing.T) {
	b := mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{Extra: []string{"max_inflight_messages 1"}})
	const n = 3000
	id := clientID(t, "t")
	c := dial(t, b.URL(), mqtt.Config{QoS: 1, StatusTopic: "-"})
	ex := executor.New(executor.Options{Workers: 2})
	out, err := c.Publisher("out-" + id)
	require.NoError(t, err)
	_, err = ex.NewOwner("bridge", nil).Subscribe(c, "in-"+id, func(ctx context.Context, m subscribers.Message) {
		require.NoError(t, out.Publish(ctx, m.Payload))
	}, executor.Depth(10), executor.Overflow(subscribers.Block))
	require.NoError(t, err)
	startExecutor(t, ex)
	var mu sync.Mutex
	var got []int
	sink := rawClient(t, b.URL())
	require.True(t, sink.Subscribe("out-"+id, 1, func(_ paho.Client, m paho.Message) {
		v, err := strconv.Atoi(string(m.Payload()))
		require.NoError(t, err)
		mu.Lock()
		got = append(got, v)
		mu.Unlock()
	}).WaitTimeout(waitFor))
	pub := rawClient(t, b.URL())
	for i := range n {
		pub.Publish("in-"+id, 1, false, fmt.Sprint(i))
	}
	most := 0
	deadline := time.Now().Add(waitFor)
	for {
		most = max(most, c.Stats().Outbound)
		mu.Lock()
		forwarded := len(got)
		mu.Unlock()
		if forwarded == n {
			break
		}
		require.True(t, time.Now().Before(deadline), "%d of %d forwarded; client %+v", forwarded, n, c.Stats())
		time.Sleep(time.Millisecond)
	}
	t.Logf("at most %d publications waiting for the broker; the intake stopped %d times", most, c.Stats().Braked)
	require.LessOrEqual(t, most, 1024+64, "publications waiting for the broker")
	mu.Lock()
	defer mu.Unlock()
	require.True(t, slices.IsSorted(got), "in order")
}

// TestReaderBrakeKeepsTheConnection: mosquitto pushes 5,000 QoS 1
// messages past the Receive Maximum to a subscription that takes 1 ms a
// message, on a connection with a keep-alive of 2 s. Reading them at the
// subscription's pace would hold the broker's answer to a ping for 5 s;
// the reader waits at most a quarter of the keep-alive in all, so the
// connection stays up, and every message runs once, in order.
func TestReaderBrakeKeepsTheConnection(t *testing.T) {
	b := mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{})
	const n = 5000
	id := clientID(t, "t")
	c := dial(t, b.URL(), mqtt.Config{QoS: 1, KeepAlive: 2 * time.Second, PingTimeout: time.Second, StatusTopic: "-"})
	ex := executor.New(executor.Options{Workers: 1})
	var mu sync.Mutex
	var got []int
	_, err := ex.NewOwner("slow", nil).Subscribe(c, "in-"+id, func(ctx context.Context, m subscribers.Message) {
		time.Sleep(time.Millisecond)
		v, err := strconv.Atoi(string(m.Payload))
		require.NoError(t, err)
		mu.Lock()
		got = append(got, v)
		mu.Unlock()
	}, executor.Depth(10), executor.Overflow(subscribers.Block))
	require.NoError(t, err)
	startExecutor(t, ex)
	pub := rawClient(t, b.URL())
	for i := range n {
		pub.Publish("in-"+id, 1, false, fmt.Sprint(i))
	}
	deadline := time.Now().Add(4 * waitFor)
	for {
		require.True(t, c.Connected(), "the connection dropped: %+v", c.Stats())
		mu.Lock()
		ran := len(got)
		mu.Unlock()
		if ran == n {
			break
		}
		require.True(t, time.Now().Before(deadline), "%d of %d ran; client %+v", ran, n, c.Stats())
		time.Sleep(20 * time.Millisecond)
	}
	st := c.Stats()
	t.Logf("the reader waited for the intake %d times", st.OverSent)
	require.Zero(t, st.ConnectionLosses, "connections lost")
	require.Positive(t, st.OverSent, "mosquitto sent past the Receive Maximum and the reader waited")
	mu.Lock()
	defer mu.Unlock()
	require.True(t, slices.IsSorted(got), "in order")
}
