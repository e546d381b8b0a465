package mqtt_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
)

// TestReceiveMaximumHoldsAtBroker: a subscription whose callback is
// stuck (queue of 1, block) while 300 QoS 1 messages come, then a QoS 0
// one on the same topic. The embedded broker sends at most the client's
// Receive Maximum (16) of the QoS 1 messages unacknowledged and keeps the
// rest, so the QoS 0 one, which MQTT lets overtake them, comes after
// about 16 of them (a few more as the first are handed over and
// acknowledged), not after all 300: the backlog waits at the broker, not
// in the client's memory. Once the callback runs again, every message
// arrives, the QoS 1 ones in order. (mosquitto keeps the QoS 0 message
// behind the QoS 1 ones it holds.)
func TestReceiveMaximumHoldsAtBroker(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{})
	const n, recvMax = 300, 16
	topic := "rm-" + clientID(t, "t") + "/t"
	c := dial(t, b.URL(), mqtt.Config{QoS: 1, ReceiveMaximum: recvMax, StatusTopic: "-"})
	ex := executor.New(executor.Options{Workers: 1})
	release := make(chan struct{})
	rec := newRecorder()
	_, err := ex.NewOwner("slow", nil).Subscribe(c, topic, func(ctx context.Context, m subscribers.Message) {
		<-release
		rec.add(ctx, m)
	}, executor.Depth(1), executor.Overflow(subscribers.Block))
	require.NoError(t, err)
	startExecutor(t, ex)
	other := rawClient(t, b.URL())
	for i := range n {
		other.Publish(topic, 1, false, fmt.Sprint(i))
	}
	publish(t, other, topic, 0, false, "qos0")
	// Release the callback only once the QoS 0 message is at the client,
	// waiting in the stalled intake: the broker's acknowledgement of a
	// later publication does not say that it was sent, as mochi queues
	// the packets for a client and writes them from another goroutine.
	// Released before, the client acknowledges the window and the broker
	// sends more of the QoS 1 ones ahead of it.
	eventually(t, "the QoS 0 message at the client", func() bool { return c.PendingQoS0() == 1 })
	close(release)
	ms := rec.waitCount(t, n+1)
	var got []string
	for _, m := range ms {
		got = append(got, string(m.Payload))
	}
	at := slices.Index(got, "qos0")
	t.Logf("the QoS 0 message came after %d QoS 1 ones", at)
	require.LessOrEqual(t, at, 2*recvMax, "QoS 1 messages before the QoS 0 one")
	want := make([]string, 0, n)
	for i := range n {
		want = append(want, fmt.Sprint(i))
	}
	require.Equal(t, want, slices.Delete(got, at, at+1), "the QoS 1 messages, in order")
}
