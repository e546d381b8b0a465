package app

// Tests of starts that fail: each returns the reason, and closes what it
// had made before it (the metrics server, the embedded broker).

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// requireFree waits until addr can be bound again.
func requireFree(t *testing.T, addr string) {
	t.Helper()
	eventually(t, addr+" is free again", func() bool {
		l, err := net.Listen("tcp", addr)
		if err == nil {
			l.Close()
		}
		return err == nil
	})
}

// TestStartPortInUse: an embedded broker that cannot listen fails the
// start with the address, and what was made before it (the metrics
// server, a recording) is closed again.
func TestStartPortInUse(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", mqtttest.FreePort(t))

	addr := l.Addr().String()
	cfg := loadConfig(t, fmt.Sprintf("mqtt: { listen: %q }\nmetrics: { listen: %q }\n", addr, metricsAddr))
	rec := filepath.Join(t.TempDir(), "run.mcap")
	_, err = Start(context.Background(), cfg, discardLogger(), Options{Record: rec})
	require.ErrorContains(t, err, "embedded broker on "+addr)
	requireFree(t, metricsAddr)
}

// TestStartBadNode: a node that cannot be built (in a config that did not
// pass Check) fails the start with its line, after the embedded broker
// and the metrics server were made: both are closed again.
func TestStartBadNode(t *testing.T) {
	t.Parallel()
	addr := fmt.Sprintf("127.0.0.1:%d", mqtttest.FreePort(t))
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", mqtttest.FreePort(t))
	path := writeConfig(t, fmt.Sprintf(`mqtt: { listen: %q, client_id: app-bad-node }
metrics: { listen: %q }
nodes:
  - { name: fine, type: heartbeat, params: { topic: hb, period: 1s } }
  - { name: silent, type: heartbeat, params: { period: 1s } }
`, addr, metricsAddr))
	cfg, err := config.Load(path)
	require.NoError(t, err, "config.Load does not build the nodes")
	_, err = Start(context.Background(), cfg, discardLogger(), Options{})
	require.EqualError(t, err, path+":5: nodes[1]: silent (heartbeat): topic is required")
	requireFree(t, addr)
	requireFree(t, metricsAddr)
}

// TestStartBadTLS: a TLS CA file without a certificate fails the check
// of the config, with its line, before anything starts.
func TestStartBadTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.pem"), []byte("not a certificate\n"), 0o644))
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("mqtt:\n  broker: ssl://127.0.0.1:1\n  tls: { ca: ca.pem }\n"), 0o644))
	_, err := LoadAndCheck(path)
	require.EqualError(t, err, path+":3: mqtt.tls.ca: "+filepath.Join(dir, "ca.pem")+": holds no PEM certificate")
}
