package robotexec_test

// Helpers of the end-to-end tests: ports, configs, output.

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// brokerNames are the external brokers the tests of robotexec on an
// external broker run against: the embedded broker started in the test's
// process, and mosquitto.
var brokerNames = []string{"embedded", "mosquitto"}

// externalBroker starts the broker named name (see brokerNames) for the
// test: the embedded one with cfg, or mosquitto with opts (without
// mosquitto the test ends as mqtttest.MissingMosquitto says).
func externalBroker(t *testing.T, name string, cfg broker.Config, opts mqtttest.MosquittoOptions) mqtttest.Broker {
	t.Helper()
	if name == "embedded" {
		return mqtttest.Embedded(t, cfg)
	}
	return mqtttest.Mosquitto(t, opts)
}

// freePort returns a loopback port that was free a moment ago, outside
// the range the kernel gives to outgoing connections.
func freePort(t *testing.T) int {
	t.Helper()
	return mqtttest.FreePort(t)
}

func requirePortFree(t *testing.T, port int) {
	t.Helper()
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	require.NoError(t, err, "port %d should be free", port)
	require.NoError(t, l.Close())
}

func brokerURL(port int) string { return fmt.Sprintf("tcp://127.0.0.1:%d", port) }

// configOnPort copies the config at src into a temporary directory, with
// its one 127.0.0.1:1883 (the embedded broker's listen address, or the
// external broker's) replaced by port. Lines keep their numbers.
func configOnPort(t *testing.T, src string, port int) string {
	t.Helper()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	const addr = "127.0.0.1:1883"
	require.Equal(t, 1, strings.Count(string(data), addr), "%s should name %s once", src, addr)
	path := filepath.Join(t.TempDir(), filepath.Base(src))
	writeFile(t, path, strings.Replace(string(data), addr, fmt.Sprintf("127.0.0.1:%d", port), 1))
	return path
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// requireOrdered checks that each of substrs is in a line of ls, in order.
func requireOrdered(t *testing.T, ls []string, substrs ...string) {
	t.Helper()
	i := 0
	for _, l := range ls {
		if i < len(substrs) && strings.Contains(l, substrs[i]) {
			i++
		}
	}
	require.Equal(t, len(substrs), i, "lines with %q in order; the lines:\n%s", substrs, strings.Join(ls, "\n"))
}

// beat is a heartbeat message: exactly {"node","seq","time"}.
type beat struct {
	Node string
	Seq  uint64
	Time time.Time
}

func parseBeat(t *testing.T, line string) beat {
	t.Helper()
	payload, ok := strings.CutPrefix(line, "robot/heartbeat ")
	require.True(t, ok, "TOPIC PAYLOAD: %q", line)
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(payload), &fields), "payload %s", payload)
	require.Len(t, fields, 3, "node, seq and time: %s", payload)
	var b beat
	var stamp string
	require.NoError(t, json.Unmarshal(fields["node"], &b.Node), payload)
	require.NoError(t, json.Unmarshal(fields["seq"], &b.Seq), payload)
	require.NoError(t, json.Unmarshal(fields["time"], &stamp), payload)
	require.Positive(t, b.Seq, "seq from 1: %s", payload)
	var err error
	b.Time, err = time.Parse(time.RFC3339Nano, stamp)
	require.NoError(t, err, "time is RFC3339Nano: %s", payload)
	return b
}
