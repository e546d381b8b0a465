package robotexec_test

// Tests of the Go API that runs a config in a program: Start and
// Shutdown, against a broker of the test's, watched from outside with a
// paho client.

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec"
	"github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// loadFile writes text to a config file and loads it with config.Load.
func loadFile(t *testing.T, text string) (*config.Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "robot.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return config.Load(path)
}

// TestStartShutdown: a started config relays a message published from
// outside and keeps its graph topic; Shutdown stops it cleanly, clearing
// the graph; a second Shutdown returns at once. A nil logger is
// slog.Default().
func TestStartShutdown(t *testing.T) {
	t.Parallel()
	b := mqtttest.Embedded(t, broker.Config{})
	cfg, err := loadFile(t, fmt.Sprintf(`mqtt: { broker: %s, client_id: api-round-trip, qos: 1, clean_session: true }
nodes:
  - { name: relay, type: bridge, params: { from: in/+, to: out/+ } }
`, b.URL()))
	require.NoError(t, err)

	const graphTopic = "robotexec/api-round-trip/graph"
	graphs, outs := make(chan paho.Message, 16), make(chan paho.Message, 16)
	c := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL()).SetClientID("api-round-trip-watch"))
	tok := c.Connect()
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "connect: %v", tok.Error())
	defer c.Disconnect(100)
	for f, ch := range map[string]chan paho.Message{"out/#": outs, graphTopic: graphs} {
		tok := c.Subscribe(f, 1, func(_ paho.Client, m paho.Message) { ch <- m })
		require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "subscribe %s: %v", f, tok.Error())
	}

	app, err := robotexec.Start(context.Background(), cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = app.Shutdown(context.Background()) }) // at once if stopped
	require.Contains(t, string(next(t, graphs).Payload()), `"name":"relay"`)

	tok = c.Publish("in/x", 1, false, "hello")
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil)
	out := next(t, outs)
	require.Equal(t, "out/x", out.Topic())
	require.Equal(t, "hello", string(out.Payload()))

	ctx, cancel := context.WithTimeout(context.Background(), traffic)
	defer cancel()
	require.NoError(t, app.Shutdown(ctx))
	require.NoError(t, app.Shutdown(ctx), "a second Shutdown")
	require.Empty(t, last(t, graphs).Payload(), "the graph is cleared")
}

// next returns the next message on got, failing after a while.
func next(t *testing.T, got <-chan paho.Message) paho.Message {
	t.Helper()
	select {
	case m := <-got:
		return m
	case <-time.After(traffic):
		t.Fatal("no message")
		return nil
	}
}

// last returns the last message on got once one came and no other
// follows for a moment.
func last(t *testing.T, got <-chan paho.Message) paho.Message {
	t.Helper()
	m := next(t, got)
	for {
		select {
		case m = <-got:
		case <-time.After(200 * time.Millisecond):
			return m
		}
	}
}

// TestStartErrors: no config, a config with a node that cannot be built
// (every problem, at its line), and a broker address in use fail the
// start.
func TestStartErrors(t *testing.T) {
	t.Parallel()
	_, err := robotexec.Start(context.Background(), nil, nil)
	require.EqualError(t, err, "robotexec: Start: no config")

	cfg, err := loadFile(t, `nodes:
  - { name: silent, type: heartbeat, params: { period: 1s } }
  - { name: odd, type: lidar }
`)
	require.NoError(t, err, "config.Load does not build the nodes")
	_, err = robotexec.Start(context.Background(), cfg, nil)
	require.Len(t, config.Errors(err), 2, "%v", err)
	require.ErrorContains(t, err, cfg.File()+":2: nodes[0]: silent (heartbeat): topic is required")
	require.ErrorContains(t, err, cfg.File()+`:3: nodes[1].type: unknown node type "lidar"`)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	cfg, err = loadFile(t, fmt.Sprintf("mqtt: { listen: %q }\n", l.Addr().String()))
	require.NoError(t, err)
	_, err = robotexec.Start(context.Background(), cfg, nil)
	require.ErrorContains(t, err, "embedded broker on "+l.Addr().String())
}
