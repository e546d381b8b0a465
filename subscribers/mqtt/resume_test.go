package mqtt_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/subscribers/mqtt"
)

// TestFirstConnectionSendsQueuedOnce publishes before the first connection
// of a persistent session on mosquitto, local first: the subscription of
// the process gets each publication once, its echo suppressed. paho
// resumes the session (sends the publications of its store again) after
// calling the client's OnConnect handler, at the same time as it; the
// client used to hand its queued publications to paho as soon as its
// subscriptions were renewed, so those that paho's resume then found in
// the store, not yet acknowledged, went to the broker twice, which sent
// their echo twice, and the second one reached the subscription that had
// had them locally (robotexec run's pipeline under load: the first
// heartbeat came again at the sink). Here paho's listing of its store
// waits until the client has handed the publications over (or a second),
// and a proxy delays the broker's acknowledgements, so that they are
// still in the store.
func TestFirstConnectionSendsQueuedOnce(t *testing.T) {
	t.Parallel()
	const n = 20
	b := mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{})
	proxy := mqtttest.NewProxy(t, b.Addr())
	proxy.Delay(100 * time.Millisecond)
	var client atomic.Pointer[mqtt.Client]
	var listings atomic.Int32
	cfg := mqtt.Config{ClientID: clientID(t, "resume"), QoS: 1, InProcess: true, StatusTopic: "-"}
	mqtt.BeforeResume(&cfg, func() {
		listings.Add(1)
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) {
			if c := client.Load(); c != nil && c.Stats().Published >= n {
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	c := dialNoWait(t, proxy.URL(), cfg)
	client.Store(c)

	ex := executor.New(executor.Options{Workers: 1})
	rec := newRecorder()
	_, err := ex.NewOwner("sub", nil).Subscribe(c, "resume/t", rec.add, executor.Depth(1000))
	require.NoError(t, err)
	startExecutor(t, ex)
	pub, err := c.Publisher("resume/t", 1, false)
	require.NoError(t, err)
	for i := range n {
		require.NoError(t, pub.Publish(fmt.Appendf(nil, "%d", i)))
	}

	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, c.WaitConnected(ctx))
	eventually(t, "every echo", func() bool { return c.Router().EchoStats().Matched >= n })
	// A last message, published after paho resumed, comes after whatever
	// the broker sends for the publications before it.
	require.NoError(t, c.PublishWait(ctx, subscribers.Message{Topic: "resume/t", QoS: 1, Payload: []byte("end")}))
	msgs := rec.waitUntil(t, "the last message", func(ms []subscribers.Message) bool {
		return len(ms) > 0 && string(ms[len(ms)-1].Payload) == "end"
	})
	got := make([]string, len(msgs))
	for i, m := range msgs {
		got[i] = string(m.Payload)
	}
	want := make([]string, 0, n+1)
	for i := range n {
		want = append(want, fmt.Sprint(i))
	}
	want = append(want, "end")
	require.Equal(t, want, got, "each publication once, in order")
	require.Equal(t, int32(1), listings.Load(), "paho resumed once")
	st := c.Router().EchoStats()
	require.Equal(t, uint64(n), st.Matched)
	require.Zero(t, st.GivenUp)
	require.Equal(t, uint64(n+1), c.Stats().Published, "each publication handed to paho once")
}
