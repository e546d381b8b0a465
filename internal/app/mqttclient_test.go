package app

// What the tests of a running config share: the config as a user writes
// it, loaded from a file, and real paho clients that talk to the config's
// broker from outside, as robotexec pub and echo or any MQTT tool would.

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/config"
)

// slogTo is a logger of every level that writes text to w.
func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// discardLogger is a logger whose lines go nowhere.
func discardLogger() *slog.Logger { return slogTo(io.Discard) }

// writeConfig writes text to config.yaml in a temporary directory and
// returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// loadConfig writes text to a config file and loads and checks it as
// robotexec run does.
func loadConfig(t *testing.T, text string) *config.Config {
	t.Helper()
	cfg, err := LoadAndCheck(writeConfig(t, text))
	require.NoError(t, err)
	return cfg
}

// startApp starts cfg with opts (logging to logger, or nowhere when nil)
// and shuts it down when the test ends, unless the test did.
func startApp(t *testing.T, cfg *config.Config, logger *slog.Logger, opts Options) *App {
	t.Helper()
	if logger == nil {
		logger = discardLogger()
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	a, err := Start(ctx, cfg, logger, opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitBound)
		defer cancel()
		_ = a.Shutdown(ctx) // a no-op when the test shut it down
	})
	return a
}

// mqttMsg is a message that a test's paho client received.
type mqttMsg struct {
	topic, payload string
	retained       bool
}

// onTopic matches the messages of topic.
func onTopic(topic string) func(mqttMsg) bool {
	return func(m mqttMsg) bool { return m.topic == topic }
}

// pahoClient is a test's paho client; it keeps every message its
// subscriptions receive, in order.
type pahoClient struct {
	c    paho.Client
	mu   sync.Mutex
	msgs []mqttMsg
}

// dialPaho connects a clean-session paho client to url as id, with
// credentials when user is not empty.
func dialPaho(t *testing.T, url, id, user, password string) (*pahoClient, error) {
	t.Helper()
	o := paho.NewClientOptions().AddBroker(url).SetClientID(id).SetCleanSession(true).
		SetAutoReconnect(false).SetConnectTimeout(waitBound)
	if user != "" {
		o.SetUsername(user).SetPassword(password)
	}
	p := &pahoClient{c: paho.NewClient(o)}
	tok := p.c.Connect()
	if !tok.WaitTimeout(waitBound) {
		t.Fatalf("paho %s: no CONNACK within %v", id, waitBound)
	}
	if err := tok.Error(); err != nil {
		return nil, err
	}
	t.Cleanup(func() { p.c.Disconnect(100) })
	return p, nil
}

// connectPaho connects an anonymous paho client to url as id.
func connectPaho(t *testing.T, url, id string) *pahoClient {
	t.Helper()
	p, err := dialPaho(t, url, id, "", "")
	require.NoError(t, err)
	return p
}

// subscribe subscribes to filter at QoS 1 and waits for the SUBACK.
func (p *pahoClient) subscribe(t *testing.T, filter string) {
	t.Helper()
	tok := p.c.Subscribe(filter, 1, func(_ paho.Client, m paho.Message) {
		p.mu.Lock()
		p.msgs = append(p.msgs, mqttMsg{topic: m.Topic(), payload: string(m.Payload()), retained: m.Retained()})
		p.mu.Unlock()
	})
	require.True(t, tok.WaitTimeout(waitBound), "SUBACK for %s", filter)
	require.NoError(t, tok.Error())
}

// publish publishes payload on topic at QoS 1 and waits for the PUBACK.
func (p *pahoClient) publish(t *testing.T, topic, payload string, retained bool) {
	t.Helper()
	tok := p.c.Publish(topic, 1, retained, payload)
	require.True(t, tok.WaitTimeout(waitBound), "PUBACK for %s", topic)
	require.NoError(t, tok.Error())
}

// received returns the messages received so far that match.
func (p *pahoClient) received(match func(mqttMsg) bool) []mqttMsg {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []mqttMsg
	for _, m := range p.msgs {
		if match(m) {
			out = append(out, m)
		}
	}
	return out
}

// await waits until at least n received messages match, and returns them.
func (p *pahoClient) await(t *testing.T, what string, n int, match func(mqttMsg) bool) []mqttMsg {
	t.Helper()
	var got []mqttMsg
	eventually(t, what, func() bool {
		got = p.received(match)
		return len(got) >= n
	})
	return got
}

// payloads returns the payloads of msgs.
func payloads(msgs []mqttMsg) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.payload
	}
	return out
}

// shutdownWithin shuts a down, failing the test if that takes longer
// than waitBound.
func shutdownWithin(t *testing.T, a *App) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	err := a.Shutdown(ctx)
	require.NotErrorIs(t, err, context.DeadlineExceeded, "Shutdown within %v", waitBound)
	return err
}

// freshProbe gives the test_probe node name a new state, for a new run
// (go test -count).
func freshProbe(name string) *probe {
	p := newProbe()
	probes.Store(name, p)
	return p
}

// awaitEntered waits until p's "block" message runs.
func awaitEntered(t *testing.T, p *probe) {
	t.Helper()
	select {
	case <-p.entered:
	case <-time.After(waitBound):
		t.Fatal("the blocking message did not start")
	}
}
