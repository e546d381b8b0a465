// Package exampletest runs the example node types as users run them, for
// the examples' tests: a config started with robotexec.Start against a
// real broker, and other MQTT clients that listen and publish.
package exampletest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec"
	"github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/subscribers"
)

// wait bounds every start, stop, connection and subscription.
const wait = 15 * time.Second

var clients atomic.Int64

// clientID returns a client ID unique in the process and across runs.
func clientID(role string) string {
	return fmt.Sprintf("example-test-%s-%d-%d", role, time.Now().UnixNano(), clients.Add(1))
}

// Quiet returns a logger that discards everything.
func Quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// StartApp runs configYAML (a config without its mqtt section: "nodes:"
// and whatever else) with robotexec.Start, as robotexec run would,
// connected to the broker at url and logging to logs (nil discards). The
// app stops when the test ends, if Stop has not stopped it before.
func StartApp(t testing.TB, url, configYAML string, logs io.Writer) *robotexec.App {
	t.Helper()
	if logs == nil {
		logs = io.Discard
	}
	cfg, err := config.Parse("test.yaml", []byte(fmt.Sprintf("mqtt: { broker: %q, client_id: %s }\n%s",
		url, clientID("app"), configYAML)))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	app, err := robotexec.Start(ctx, cfg, slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	t.Cleanup(func() { Stop(t, app) })
	return app
}

// Stop shuts app down, as SIGINT does robotexec run; a second Stop
// returns at once.
func Stop(t testing.TB, app *robotexec.App) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, app.Shutdown(ctx))
}

// Dial connects another client to the broker at url, closed when the test
// ends.
func Dial(t testing.TB, url, role string) *mqtt.Client {
	t.Helper()
	c, err := mqtt.Dial(mqtt.Config{Broker: url, ClientID: clientID(role), QoS: 1, CleanSession: true, StatusTopic: "-", Logger: Quiet()})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, c.WaitConnected(ctx))
	return c
}

// Listen subscribes another client to filter, acknowledged by the broker
// when it returns; the messages arrive on the channel, up to 1,000 unread.
func Listen(t testing.TB, url, filter string) <-chan subscribers.Message {
	t.Helper()
	c := Dial(t, url, "listener")
	ex := executor.New(executor.Options{Workers: 1, Logger: Quiet()})
	ch := make(chan subscribers.Message, 1000)
	_, err := ex.NewOwner("listener", nil).Subscribe(c, filter, func(ctx context.Context, m subscribers.Message) { ch <- m }, executor.Depth(1000))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ex.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ch
}

// Publish publishes payloads on topic from another client, in order, at
// QoS 1.
func Publish(t testing.TB, url, topic string, payloads ...string) {
	t.Helper()
	p, err := Dial(t, url, "publisher").Publisher(topic, bus.WithQoS(1))
	require.NoError(t, err)
	for _, payload := range payloads {
		require.NoError(t, p.Publish(context.Background(), []byte(payload)))
	}
}
