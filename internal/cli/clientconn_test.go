package cli

// Tests of how the client commands find the broker (-broker, else
// $ROBOTEXEC_BROKER, else -config, else the default) and of flags
// anywhere on the command line.

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/internal/testpki"
)

const beatNode = "  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 20ms } }\n"

// echoOne runs echo for one heartbeat with args and requires it.
func echoOne(t *testing.T, args ...string) {
	t.Helper()
	r := startCLI(append([]string{"echo", "-n", "1", "-timeout", "5s"}, args...)...).wait(t, traffic)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.True(t, strings.HasPrefix(r.stdout, "robot/heartbeat "), "%s", r)
}

// The broker comes from -broker, else $ROBOTEXEC_BROKER, else -config's
// mqtt section (an embedded broker's listen address), else the default.
func TestClientFindsBroker(t *testing.T) {
	a := startApp(t, "cli-find", beatNode)
	dead := unreachable(t)
	deadCfg := filepath.Join(t.TempDir(), "dead.yaml")
	writeFile(t, deadCfg, "mqtt:\n  broker: "+dead+"\n")
	liveCfg := filepath.Join(t.TempDir(), "live.yaml")
	writeFile(t, liveCfg, "mqtt:\n  listen: "+strings.TrimPrefix(a.url, "tcp://")+"\n")

	t.Setenv(BrokerEnv, a.url)
	echoOne(t, "robot/heartbeat")
	echoOne(t, "-config", deadCfg, "robot/heartbeat") // the variable wins over -config

	t.Setenv(BrokerEnv, dead)
	echoOne(t, "robot/heartbeat", "-broker", a.url) // -broker wins, after the argument

	t.Setenv(BrokerEnv, "")
	echoOne(t, "-config", liveCfg, "robot/heartbeat")
	r := cli(t, "echo", "-config", deadCfg, "-n", "1", "robot/heartbeat")
	require.Equal(t, ExitFailure, r.code, "%s", r)
	require.Contains(t, r.stderr, dead, "%s", r)

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	writeFile(t, bad, "mqtt:\n  qos: 7\n")
	r = cli(t, "pub", "-config", bad, "a/b", "x")
	require.Equal(t, ExitUsage, r.code, "%s", r)
	require.Contains(t, r.stderr, bad+":2: mqtt.qos: ", "%s", r)
}

// -config brings the config's credentials: a broker with users lets the
// command in with them, and refuses it without.
func TestClientConfigCredentials(t *testing.T) {
	t.Parallel()
	port := mqtttest.FreePort(t)
	path := filepath.Join(t.TempDir(), "robot.yaml")
	writeFile(t, path, fmt.Sprintf("mqtt:\n  listen: 127.0.0.1:%d\n  client_id: cli-creds\n  username: robot\n  password: s3cret\n"+
		"  users:\n    - { username: robot, password: s3cret, read: [\"#\"], write: [\"#\"] }\n"+
		"nodes:\n%s", port, beatNode))
	cfg, err := app.LoadAndCheck(path)
	require.NoError(t, err)
	a, err := app.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Options{Version: testVersion})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), quickExit)
		defer cancel()
		assert.NoError(t, a.Shutdown(ctx))
	})
	echoOne(t, "-config", path, "robot/heartbeat")
	start := time.Now()
	r := cli(t, "echo", "-broker", fmt.Sprintf("tcp://127.0.0.1:%d", port), "-n", "1", "robot/heartbeat")
	require.Equal(t, ExitFailure, r.code, "%s", r)
	require.Contains(t, r.stderr, "anonymous connections are not allowed", "%s", r)
	require.Less(t, time.Since(start), 5*time.Second, "refused at once, not after the 10 s timeout: %s", r)
}

// A refused connection ends the command at once, naming the URL, even
// with the default 10 s -timeout.
func TestClientRefusedAtOnce(t *testing.T) {
	t.Parallel()
	dead := unreachable(t)
	for _, args := range [][]string{{"pub", "-broker", dead, "a/b", "x"}, {"echo", "a/#", "-broker", dead}, {"topic", "list", "-broker", dead}} {
		start := time.Now()
		r := cli(t, args...)
		require.Equal(t, ExitFailure, r.code, "%s", r)
		require.Contains(t, r.stderr, dead, "%s", r)
		require.Contains(t, r.stderr, "connection refused", "%s", r)
		require.Less(t, time.Since(start), 5*time.Second, "not the 10 s timeout: %s", r)
	}
}

// Flags may stand before, between and after the arguments; -- ends them.
func TestFlagsAnywhere(t *testing.T) {
	t.Parallel()
	a := startApp(t, "cli-flags", beatNode)
	got := make(chan string, 10)
	sub := pahoClient(t, a.url, "cli-flags-watcher")
	tok := sub.Subscribe("cli/flags/#", 1, func(_ paho.Client, m paho.Message) { got <- m.Topic() + " " + string(m.Payload()) })
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "subscribe: %v", tok.Error())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pub", "cli/flags/a", "after", "-broker", a.url, "-qos", "0"}, "cli/flags/a after"},
		{[]string{"pub", "cli/flags/b", "-broker", a.url, "between"}, "cli/flags/b between"},
		{[]string{"pub", "-broker", a.url, "--", "cli/flags/c", "-qos"}, "cli/flags/c -qos"},
	} {
		r := cli(t, tc.args...)
		require.Equal(t, ExitOK, r.code, "%s", r)
		select {
		case m := <-got:
			require.Equal(t, tc.want, m)
		case <-time.After(traffic):
			t.Fatalf("%v: nothing arrived", tc.args)
		}
	}
	r := startCLI("topic", "hz", "robot/heartbeat", "-n", "1", "-broker", a.url).wait(t, traffic)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Contains(t, r.stdout, "average rate", "%s", r)
}

// -ca, -cert and -key connect to a TLS broker that requires a client
// certificate; without -ca the broker's certificate is not trusted.
func TestClientTLSFlags(t *testing.T) {
	t.Parallel()
	p := testpki.New(t)
	b := mqtttest.Embedded(t, broker.Config{Anonymous: broker.AnonymousAllowed, TLS: &tls.Config{
		Certificates: []tls.Certificate{p.Server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.CAPool,
		MinVersion:   tls.VersionTLS12,
	}})
	url := b.Broker().URL()
	files := []string{"-ca", p.CAFile, "-cert", p.CertFile, "-key", p.KeyFile}
	r := cli(t, append([]string{"pub", "-broker", url, "-retain", "secure/x", "over tls"}, files...)...)
	require.Equal(t, ExitOK, r.code, "%s", r)
	r = startCLI(append([]string{"echo", "secure/x", "-n", "1", "-broker", url}, files...)...).wait(t, traffic)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Equal(t, "secure/x over tls\n", r.stdout)

	r = cli(t, "pub", "-broker", url, "-timeout", "1s", "-cert", p.CertFile, "-key", p.KeyFile, "secure/x", "untrusted")
	require.Equal(t, ExitFailure, r.code, "%s", r)
	require.Contains(t, r.stderr, "certificate", "%s", r)
}
