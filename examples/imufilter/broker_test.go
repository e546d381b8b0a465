package imufilter_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec"
	"github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/subscribers/mqtt"
	"github.com/robotexec/robotexec/subscribers/mqtt/broker"
)

// The filter in a running robotexec, on a real broker: samples published
// by another client are filtered and the average comes back over MQTT.
func TestFilterOverTheBroker(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{})
	startApp(t, b.URL(), `
  - name: imu_filter
    type: imu_filter
    params: { input: robot/imu0/data, output: robot/imu0/filtered, alpha: 0.5, period: 20ms, log: 0s }
`)
	filtered := listen(t, b.URL(), "robot/imu0/filtered")
	publish(t, b.URL(), "robot/imu0/data", `{"ax":4,"az":9.8}`, `{"ax":0,"az":9.8}`, `not json`, `{"ax":2,"az":9.8}`)

	want := `{"ax":2,"ay":0,"az":9.8,"gx":0,"gy":0,"gz":0,"samples":3}`
	deadline := time.After(15 * time.Second)
	for {
		select {
		case m := <-filtered:
			if bytes.Contains(m.Payload, []byte(`"samples":3`)) {
				require.JSONEq(t, want, string(m.Payload))
				return
			}
		case <-deadline:
			t.Fatal("no average of the three samples within 15s")
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
	return fmt.Sprintf("imufilter-test-%s-%d-%d", role, time.Now().UnixNano(), clientSeq.n)
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

// publish publishes payloads on topic from another client, in order.
func publish(t *testing.T, url, topic string, payloads ...string) {
	t.Helper()
	p, err := dial(t, url, "publisher").Publisher(topic, 1, false)
	require.NoError(t, err)
	for _, payload := range payloads {
		require.NoError(t, p.Publish([]byte(payload)))
	}
}
