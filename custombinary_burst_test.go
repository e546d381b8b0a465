package robotexec_test

// The MQTT client's flow control under robotexec run, with a slow
// subscriber of the custom binary (custombinary_cli_test.go): a burst
// waits at the broker, not in the process.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// burstWaitsAtBroker: 1,000 QoS 1 messages published at once for a
// slow_sink that takes 1 ms a message, through the broker named name (the
// embedded one, or mosquitto, whose 2.0.11 sends past the client's Receive
// Maximum once the client acknowledges). The messages received and not yet
// handed to the sink's queue, robotexec_mqtt_intake_messages, stay within
// twice the Receive Maximum (64 at the default max_payload), and the sink
// runs every message once.
func burstWaitsAtBroker(t *testing.T, bin, name string) {
	const n, receiveMaximum = 1000, 64
	b := externalBroker(t, name, broker.Config{}, mqtttest.MosquittoOptions{})
	mport := freePort(t)
	r := &pipelineRun{url: b.URL(), metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", mport)}
	path := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, path, fmt.Sprintf("mqtt: { broker: %s, client_id: robotexec-burst-%s, qos: 1 }\nmetrics: { listen: 127.0.0.1:%d }\nnodes:\n  - { name: sink, type: slow_sink, params: { input: burst/in, work: 1ms } }\n",
		b.URL(), strings.ToLower(name), mport))
	r.proc = startRun(t, bin, path)
	waitHealthy(t, r)
	pub := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL()).SetClientID("burst-" + name).SetCleanSession(true))
	tok := pub.Connect()
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "connect: %v", tok.Error())
	defer pub.Disconnect(100)
	for i := range n {
		pub.Publish("burst/in", 1, false, fmt.Sprint(i))
	}
	const runs = `robotexec_callback_duration_seconds_count{callback="burst/in",node="sink"}`
	most := 0.0
	deadline := time.Now().Add(3 * traffic)
	for r.metric(t, runs) < n {
		require.True(t, time.Now().Before(deadline), "%d messages through the sink within %v", n, 3*traffic)
		most = max(most, r.metric(t, "robotexec_mqtt_intake_messages"))
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%s: at most %.0f messages in the intake", name, most)
	require.LessOrEqual(t, most, 2.0*receiveMaximum, "messages held in the process past the Receive Maximum")
	require.Equal(t, float64(n), r.metric(t, runs), "each message once")
}
