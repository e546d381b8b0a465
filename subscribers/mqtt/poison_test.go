package mqtt_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/subscribers/mqtt"
	"github.com/robotexec/robotexec/subscribers/mqtt/broker"
)

// maxPacket is the brokers' packet size limit in TestRefusedPublication.
const maxPacket = 4096

// A publication that the broker refuses by closing the connection (over
// its packet size limit, below the client's MaxPayload) costs at most two
// reconnections: it is dropped from paho's store, counted and logged once,
// and a concurrent 100 Hz QoS 1 stream on a persistent session keeps
// flowing, every message delivered, 99% within 2 s. A payload over MaxPayload is refused
// at Publish, before any broker sees it.
func TestRefusedPublication(t *testing.T) {
	brokers := map[string]func(t *testing.T) mqtttest.Broker{
		"embedded": func(t *testing.T) mqtttest.Broker {
			return mqtttest.Embedded(t, broker.Config{MaxPacketSize: maxPacket, Logger: newLogSink(t).logger()})
		},
		"mosquitto": func(t *testing.T) mqtttest.Broker {
			return mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{Extra: []string{"max_packet_size " + strconv.Itoa(maxPacket)}})
		},
	}
	for name, start := range brokers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			refusedPublication(t, start(t))
		})
	}
}

func refusedPublication(t *testing.T, b mqtttest.Broker) {
	const n = 200 // 2 s at 100 Hz
	var mu sync.Mutex
	seen := map[int]bool{}
	sentAt := make([]time.Time, n)
	late := 0 // delivered more than 2 s after publishing
	big := 0
	watcher := rawClient(t, b.URL())
	tok := watcher.Subscribe("s/#", 1, func(_ paho.Client, m paho.Message) {
		mu.Lock()
		defer mu.Unlock()
		if m.Topic() == "s/big" {
			big++
			return
		}
		i, _ := strconv.Atoi(string(m.Payload()))
		if !seen[i] && time.Since(sentAt[i]) > 2*time.Second {
			late++
		}
		seen[i] = true
	})
	require.True(t, tok.WaitTimeout(waitFor))
	require.NoError(t, tok.Error())

	logs := newLogSink(t)
	c := dial(t, b.URL(), mqtt.Config{QoS: 1, MaxPayload: 64 << 10, Logger: logs.logger()})
	stream, err := c.Publisher("s/stream", 1, false)
	require.NoError(t, err)
	bigPub, err := c.Publisher("s/big", 1, false)
	require.NoError(t, err)
	_, err = bigPub.PublishMessage(subscribers.Message{Payload: make([]byte, 65<<10), QoS: 1})
	require.ErrorIs(t, err, subscribers.ErrTooLarge, "over MaxPayload")

	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for i := range n {
		if i == n/4 {
			require.NoError(t, bigPub.Publish(make([]byte, 2*maxPacket)))
		}
		mu.Lock()
		sentAt[i] = time.Now()
		mu.Unlock()
		// A QoS 1 publication fails only when the client is closed.
		require.NoError(t, stream.Publish([]byte(strconv.Itoa(i))))
		<-tick.C
	}
	eventually(t, "every stream message delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == n
	})
	st := c.Stats()
	require.LessOrEqual(t, st.Reconnects, uint64(2), "%s", logs)
	require.Equal(t, uint64(2), st.PublishFailed, "one over MaxPayload, one dropped")
	require.Equal(t, 1, strings.Count(logs.String(), "dropped, not sent again"), "%s", logs)
	require.Contains(t, logs.String(), `topic=s/big bytes=8192`)
	mu.Lock()
	require.Zero(t, big)
	require.LessOrEqual(t, late, n/100, "at least 99%% of the stream within 2 s")
	t.Logf("%s: reconnects %d; stream %d of %d delivered within 2 s", b.Name(), st.Reconnects, n-late, n)
	mu.Unlock()
}
