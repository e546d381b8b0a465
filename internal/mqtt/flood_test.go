package mqtt_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
)

// A QoS 1 flood into a subscription of depth 10 with a slow callback: the
// drop policies drop (and count) what does not fit, keeping the oldest or
// the newest messages; block loses nothing. The connection stays up all
// along, although a callback stalls (and so the block policy holds the
// acknowledgements back) longer than keep-alive plus ping timeout: paho's handler never waits for the executor, so pings are
// answered.
func TestFloodPolicies(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		for _, p := range []subscribers.Policy{subscribers.DropOldest, subscribers.DropNewest, subscribers.Block} {
			t.Run(p.String(), func(t *testing.T) {
				t.Parallel()
				flood(t, b, p)
			})
		}
	})
}

func flood(t *testing.T, b mqtttest.Broker, policy subscribers.Policy) {
	const depth = 10
	n, stallAt, stall := 300, -1, time.Duration(0)
	if policy == subscribers.Block {
		// No ack for 3.5 s: more than keep-alive (2 s) plus ping timeout
		// (1 s), so paho must ping, and the answer must get through
		// while the intake waits for the subscription. (mochi, unlike
		// mosquitto, drops a client with a keep-alive of 1 s that is
		// silent for 1 s: its deadline is 1.5 × keep-alive in whole
		// seconds.)
		n, stallAt, stall = 600, 100, 3500*time.Millisecond
	}
	c := dial(t, b.URL(), mqtt.Config{QoS: 1, CleanSession: true, KeepAlive: 2 * time.Second, PingTimeout: time.Second, StatusTopic: "-"})
	ex := executor.New(executor.Options{Workers: 2})
	var mu sync.Mutex
	var got []int
	topic := "flood/" + policy.String()
	sub, err := ex.NewOwner("slow", nil).Subscribe(c, topic, func(ctx context.Context, m subscribers.Message) {
		seq := seqOf(t, m.Payload)
		if seq == stallAt {
			time.Sleep(stall)
		}
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		got = append(got, seq)
		mu.Unlock()
	}, executor.Depth(depth), executor.Overflow(policy))
	require.NoError(t, err)
	startExecutor(t, ex)

	pub := rawClient(t, b.URL())
	var last interface{ WaitTimeout(time.Duration) bool }
	for i := range n {
		last = pub.Publish(topic, 1, false, fmt.Sprint(i))
	}
	require.True(t, last.WaitTimeout(waitFor))

	// Wait until every message is either run or dropped, checking on the
	// way that the connection never drops.
	deadline := time.After(waitFor)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		st := sub.Stats()
		mu.Lock()
		ran := len(got)
		mu.Unlock()
		require.True(t, c.Connected(), "connection dropped during the flood: %+v", c.Stats())
		if uint64(ran)+st.Dropped[subscribers.QueueFull] == uint64(n) && st.Queued == 0 {
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("ran %d, stats %+v, client %+v", ran, st, c.Stats())
		}
	}

	mu.Lock()
	defer mu.Unlock()
	st := sub.Stats()
	dropped := int(st.Dropped[subscribers.QueueFull])
	require.True(t, slices.IsSorted(got), "out of order: %v", got)
	require.Len(t, slices.Compact(slices.Clone(got)), len(got), "duplicates")
	switch policy {
	case subscribers.DropNewest:
		require.Positive(t, dropped)
		require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, got[:depth], "the first messages fit")
		require.EqualValues(t, n-dropped, st.Accepted)
	case subscribers.DropOldest:
		require.Positive(t, dropped)
		require.Equal(t, []int{n - 10, n - 9, n - 8, n - 7, n - 6, n - 5, n - 4, n - 3, n - 2, n - 1}, got[len(got)-depth:], "the last messages stay")
		require.EqualValues(t, n, st.Accepted)
	case subscribers.Block:
		require.Zero(t, dropped)
		require.Len(t, got, n)
	}
	cs := c.Stats()
	require.Zero(t, cs.ConnectionLosses, "%+v", cs)
	require.Zero(t, cs.Reconnects, "%+v", cs)
	require.EqualValues(t, n, cs.Received)
	t.Logf("%s on %s: %d messages, %d run, %d dropped", policy, b.Name(), n, len(got), dropped)
}

// QoS 0 messages have no broker-side brake: while a Block subscription is
// full, at most MaxPendingQoS0 of them wait in the client, newer ones are
// dropped and counted on the client and on the subscription.
func TestPendingQoS0Bound(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		const n, pending, depth = 500, 50, 5
		c := dial(t, b.URL(), mqtt.Config{QoS: 0, MaxPendingQoS0: pending, StatusTopic: "-"})
		ex := executor.New(executor.Options{Workers: 1})
		gate := make(chan struct{})
		var mu sync.Mutex
		var got []int
		sub, err := ex.NewOwner("n", nil).Subscribe(c, "q0", func(ctx context.Context, m subscribers.Message) {
			<-gate
			mu.Lock()
			got = append(got, seqOf(t, m.Payload))
			mu.Unlock()
		}, executor.Depth(depth), executor.Overflow(subscribers.Block))
		require.NoError(t, err)
		startExecutor(t, ex)

		pub := rawClient(t, b.URL())
		for i := range n {
			pub.Publish("q0", 0, false, fmt.Sprint(i))
		}
		eventually(t, "every message received", func() bool { return c.Stats().Received == n })
		cs := c.Stats()
		dropped := cs.Dropped[subscribers.QueueFull]
		// One running, depth queued, pending waiting (one of them being
		// handed over); give or take the one the worker takes late.
		require.InDelta(t, n-1-depth-pending, dropped, 2, "%+v", cs)
		require.Equal(t, dropped, sub.Stats().Dropped[subscribers.QueueFull])
		close(gate)
		eventually(t, "the rest run", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return uint64(len(got))+dropped == n
		})
		require.True(t, slices.IsSorted(got))
		require.Zero(t, c.Stats().Pending)
	})
}
