package mqtt_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
)

// TestQueuedMessageMemory: what a small message waiting in the intake
// keeps on the heap. During a burst a bridge's intake holds thousands of
// them (mosquitto 2.0.11 sends past the Receive Maximum while the bridge
// must read its publications' acknowledgements). paho reads each payload
// into a buffer of at least 512 bytes; kept as it is, a 10-byte message
// held about 760 bytes, with the payload made to fit about 260.
func TestQueuedMessageMemory(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{})
	const n = 5000
	topic := "mem-" + clientID(t, "t") + "/t"
	c := dial(t, b.URL(), mqtt.Config{QoS: 0, StatusTopic: "-"})
	ex := executor.New(executor.Options{Workers: 1})
	first := make(chan struct{}, 1)
	_, err := ex.NewOwner("sink", nil).Subscribe(c, topic, func(context.Context, subscribers.Message) {
		select {
		case first <- struct{}{}:
		default:
		}
	})
	require.NoError(t, err)
	startExecutor(t, ex)
	other := rawClient(t, b.URL())
	publish(t, other, topic, 0, false, "warm")
	<-first
	c.Pause()
	defer c.Resume()
	before := liveHeap()
	for i := range n {
		other.Publish(topic, 0, false, fmt.Sprintf("m%09d", i))
	}
	eventually(t, "the messages in the paused intake", func() bool { return c.PendingQoS0() == n })
	per := float64(int64(liveHeap())-int64(before)) / n
	t.Logf("%.0f bytes on the heap per queued message", per)
	require.Less(t, per, 450.0, "bytes kept per queued 10-byte message")
}

// liveHeap returns the heap's live bytes after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
