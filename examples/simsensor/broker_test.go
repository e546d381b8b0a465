package simsensor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec"
	"github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/examples/simsensor"
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/subscribers/mqtt"
	"github.com/robotexec/robotexec/subscribers/mqtt/broker"
)

// Both sensors in a running robotexec, on a real broker and the wall
// clock: another client receives their samples, in order, near the
// simulated truth.
func TestSensorsOverTheBroker(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{})
	raw := listen(t, b.URL(), "sensors/+/raw")
	startApp(t, b.URL(), `
  - { name: imu0, type: sim_imu, params: { topic: sensors/imu0/raw, rate: 200 } }
  - { name: odom, type: sim_odom, params: { topic: sensors/odom/raw, rate: 100, speed: 1 } }
`)
	var imu []simsensor.IMUSample
	var odom []simsensor.Odometry
	deadline := time.After(15 * time.Second)
	for len(imu) < 10 || len(odom) < 10 {
		select {
		case m := <-raw:
			switch m.Topic {
			case "sensors/imu0/raw":
				var s simsensor.IMUSample
				require.NoError(t, json.Unmarshal(m.Payload, &s))
				imu = append(imu, s)
			case "sensors/odom/raw":
				var o simsensor.Odometry
				require.NoError(t, json.Unmarshal(m.Payload, &o))
				odom = append(odom, o)
			default:
				t.Fatalf("unexpected topic %s", m.Topic)
			}
		case <-deadline:
			t.Fatalf("got %d IMU samples and %d poses within 15s, want 10 of each", len(imu), len(odom))
		}
	}
	var last time.Time
	for _, s := range imu {
		require.InDelta(t, 9.81, s.AZ, 0.2, "10 standard deviations of the noise")
		require.InDelta(t, 0.2, s.GZ, 0.2)
		stamp, err := time.Parse(time.RFC3339Nano, s.Stamp)
		require.NoError(t, err)
		require.True(t, stamp.After(last), "stamp %v after %v", stamp, last)
		last = stamp
	}
	for i, o := range odom {
		require.InDelta(t, 1, o.V, 0.2)
		if i > 0 {
			require.Greater(t, o.X, odom[i-1].X, "driving forward along x at first")
		}
	}
}

var clientSeq struct {
	sync.Mutex
	n int
}

func clientID(role string) string {
	clientSeq.Lock()
	defer clientSeq.Unlock()
	clientSeq.n++
	return fmt.Sprintf("simsensor-test-%s-%d-%d", role, time.Now().UnixNano(), clientSeq.n)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// startApp runs the nodes (YAML of the config's nodes list) with
// robotexec.Start, as robotexec run would, connected to the broker at url.
func startApp(t *testing.T, url, nodesYAML string) {
	t.Helper()
	cfg, err := config.Parse("test.yaml", []byte(fmt.Sprintf("mqtt: { broker: %q, client_id: %s }\nnodes:\n%s",
		url, clientID("app"), nodesYAML)), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	app, err := robotexec.Start(ctx, cfg, quiet())
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		require.NoError(t, app.Shutdown(ctx))
	})
}

func dial(t *testing.T, url, role string) *mqtt.Client {
	t.Helper()
	c, err := mqtt.Dial(mqtt.Config{Broker: url, ClientID: clientID(role), QoS: 1, CleanSession: true, StatusTopic: "-", Logger: quiet()})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	require.NoError(t, c.WaitConnected(ctx))
	return c
}

// listen subscribes another client to filter, acknowledged by the broker
// when it returns; the messages arrive on the channel.
func listen(t *testing.T, url, filter string) <-chan subscribers.Message {
	t.Helper()
	c := dial(t, url, "listener")
	ex := executor.New(executor.Options{Workers: 1, Logger: quiet()})
	ch := make(chan subscribers.Message, 1000)
	_, err := ex.NewOwner("listener", nil).Subscribe(c, filter, func(m subscribers.Message) { ch <- m }, executor.Depth(1000))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ex.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ch
}
