package robotexec_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/stretchr/testify/require"
)

// v5Inbox is an MQTT 5 client that acknowledges only when told.
type v5Inbox struct {
	c   *paho.Client
	mu  sync.Mutex
	got []*paho.Publish
}

// dialV5Inbox connects an MQTT 5 client with Receive Maximum recvMax to
// addr, retrying while the broker starts.
func dialV5Inbox(t *testing.T, addr, id string, recvMax uint16) *v5Inbox {
	t.Helper()
	var conn net.Conn
	require.Eventually(t, func() bool {
		var err error
		conn, err = net.Dial("tcp", addr)
		return err == nil
	}, traffic, 50*time.Millisecond, "the broker at %s", addr)
	in := &v5Inbox{}
	in.c = paho.NewClient(paho.ClientConfig{Conn: conn, EnableManualAcknowledgment: true, SendAcksInterval: time.Millisecond,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(p paho.PublishReceived) (bool, error) {
			in.mu.Lock()
			in.got = append(in.got, p.Packet)
			in.mu.Unlock()
			return true, nil
		}}})
	ctx, cancel := context.WithTimeout(context.Background(), traffic)
	defer cancel()
	_, err := in.c.Connect(ctx, &paho.Connect{ClientID: id, CleanStart: true, KeepAlive: 30,
		Properties: &paho.ConnectProperties{ReceiveMaximum: &recvMax}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = in.c.Disconnect(&paho.Disconnect{}) })
	return in
}

func (in *v5Inbox) received() []*paho.Publish {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]*paho.Publish(nil), in.got...)
}

// TestEmbeddedBrokerReceiveMaximum: an MQTT 5 client of robotexec run's
// embedded broker, with Receive Maximum 4, that does not acknowledge yet,
// subscribed to a topic on which 40 QoS 1 messages are published, then a
// QoS 0 one: the broker sends it 4 of the QoS 1 messages, holds the
// others (the QoS 0 one overtakes them), and sends them as the client
// acknowledges, each once, in order.
func TestEmbeddedBrokerReceiveMaximum(t *testing.T) {
	t.Parallel()
	r := startPipeline(t, pipelineOptions{broker: "embedded", inProcess: true,
		nodes: "  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 100ms } }\n"})
	addr := strings.TrimPrefix(r.url, "tcp://")
	slow := dialV5Inbox(t, addr, "slow", 4)
	ctx, cancel := context.WithTimeout(context.Background(), traffic)
	defer cancel()
	_, err := slow.c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "load/#", QoS: 1}}})
	require.NoError(t, err)
	pub := dialV5Inbox(t, addr, "pub", 100)
	const n = 40
	for i := range n {
		_, err := pub.c.Publish(ctx, &paho.Publish{Topic: "load/q", QoS: 1, Payload: []byte(fmt.Sprint(i))})
		require.NoError(t, err)
	}
	_, err = pub.c.Publish(ctx, &paho.Publish{Topic: "load/mark", QoS: 0})
	require.NoError(t, err)

	var got []*paho.Publish
	require.Eventually(t, func() bool {
		got = slow.received()
		return len(got) > 0 && got[len(got)-1].Topic == "load/mark"
	}, traffic, time.Millisecond, "the QoS 0 message")
	require.Len(t, got, 5, "4 QoS 1 messages, then the QoS 0 one")

	acked := 0
	require.Eventually(t, func() bool {
		got = slow.received()
		for ; acked < len(got); acked++ {
			require.NoError(t, slow.c.Ack(got[acked]))
		}
		return len(got) >= n+1
	}, traffic, time.Millisecond, "every message")
	var payloads []string
	for _, p := range got {
		if p.Topic == "load/q" {
			payloads = append(payloads, string(p.Payload))
		}
	}
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprint(i)
	}
	require.Equal(t, want, payloads)
}
