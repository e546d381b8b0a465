package cli

// The harness of the tests that drive the command line in process, as a
// user would from a shell: Run with real files in t.TempDir(), against a
// robotexec instance started as robotexec run starts it (app.Start, with
// the embedded broker of its config on a free loopback port) and real
// paho clients.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotexec/robotexec/internal/syncbuf"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// Bounds of the waits: generous, so that a loaded machine does not fail
// the tests, yet short enough that a hang fails fast.
const (
	quickExit = 10 * time.Second // a command that should end by itself
	traffic   = 15 * time.Second // until a message goes through
)

// refusedWait is the -timeout of the commands pointed at a broker that is
// not there: its first connection attempt is refused at once, and the
// command says so when the timeout ends.
const refusedWait = "500ms"

// testVersion is the version the tests give Run.
const testVersion = "v9.8.7-clitest"

// result is what a command printed and its exit status.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// syncBuffer is an output stream that a command writes from its own
// goroutines while the test reads it.
type syncBuffer = syncbuf.Buffer

// running is a command started by startCLI.
type running struct {
	args           []string
	stdout, stderr syncBuffer
	code           chan int
}

// startCLI runs robotexec args in process, in the background.
func startCLI(args ...string) *running {
	r := &running{args: args, code: make(chan int, 1)}
	go func() { r.code <- Run(args, &r.stdout, &r.stderr, testVersion) }()
	return r
}

// wait waits for the command to exit, failing the test after d.
func (r *running) wait(t *testing.T, d time.Duration) result {
	t.Helper()
	select {
	case code := <-r.code:
		r.code <- code // wait may be called again
		return result{code, r.stdout.String(), r.stderr.String()}
	case <-time.After(d):
		t.Fatalf("robotexec %s did not exit within %v\nstdout:\n%s\nstderr:\n%s",
			strings.Join(r.args, " "), d, r.stdout.String(), r.stderr.String())
		return result{}
	}
}

// cli runs robotexec args in process and returns what it printed.
func cli(t *testing.T, args ...string) result {
	t.Helper()
	return startCLI(args...).wait(t, quickExit)
}

// waitUntil calls cond on the test goroutine (it may fail the test)
// until it returns true, and fails the test after timeout with state,
// what cond last saw.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool, state func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; the last seen:\n%s", what, timeout, state())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// writeFile writes content to path.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// unreachable returns a broker URL where nothing listens (a moment ago).
func unreachable(t *testing.T) string {
	return fmt.Sprintf("tcp://127.0.0.1:%d", mqtttest.FreePort(t))
}

// liveApp is a robotexec instance for the commands to look at.
type liveApp struct {
	url     string // its broker
	metrics string // the URL of its /metrics
}

// startApp writes a config of nodes (the YAML lines of its nodes list)
// with an embedded broker and a metrics server on free ports, starts it as
// robotexec run does, and stops it at the end of the test.
func startApp(t *testing.T, clientID, nodes string) *liveApp {
	t.Helper()
	return startAppOn(t, "embedded", clientID, nodes)
}

// startAppOn is startApp with the broker of the config: "embedded", or the
// URL of another instance's.
func startAppOn(t *testing.T, broker, clientID, nodes string) *liveApp {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	for attempt := 1; ; attempt++ {
		port, mport := mqtttest.FreePort(t), mqtttest.FreePort(t)
		url, mqttKeys := broker, "broker: "+broker
		if broker == "embedded" {
			url = fmt.Sprintf("tcp://127.0.0.1:%d", port)
			mqttKeys += fmt.Sprintf(", listen: 127.0.0.1:%d", port)
		}
		writeFile(t, path, fmt.Sprintf("executor: { workers: 2 }\n"+
			"mqtt: { %s, client_id: %s, qos: 1 }\n"+
			"metrics: { listen: 127.0.0.1:%d }\nnodes:\n%s", mqttKeys, clientID, mport, nodes))
		cfg, err := app.LoadAndCheck(path)
		require.NoError(t, err)
		a, err := app.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Options{Version: testVersion})
		if err != nil && attempt < 3 && strings.Contains(err.Error(), "address already in use") {
			continue // a free port taken in between
		}
		require.NoError(t, err)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), quickExit)
			defer cancel()
			assert.NoError(t, a.Shutdown(ctx))
		})
		return &liveApp{url: url, metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", mport)}
	}
}

// pahoClient connects a paho client to url, disconnected at the end of
// the test.
func pahoClient(t *testing.T, url, id string) paho.Client {
	t.Helper()
	c := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID(id).SetCleanSession(true))
	tok := c.Connect()
	require.True(t, tok.WaitTimeout(traffic), "connect to %s: timed out", url)
	require.NoError(t, tok.Error(), "connect to %s", url)
	t.Cleanup(func() { c.Disconnect(100) })
	return c
}

// publish publishes one message with paho and waits for the broker.
func publish(t *testing.T, c paho.Client, topic string, retained bool, payload string) {
	t.Helper()
	tok := c.Publish(topic, 1, retained, payload)
	require.True(t, tok.WaitTimeout(traffic), "publish %s: timed out", topic)
	require.NoError(t, tok.Error(), "publish %s", topic)
}

// lines splits output into its lines.
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
