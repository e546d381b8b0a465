package cli

// Tests of a list of brokers for the client commands: -broker repeated,
// $ROBOTEXEC_BROKER as a comma-separated list, and a config's list.

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A command given several brokers uses the first that answers, from a
// repeated -broker, the environment or a config; it fails at once only when
// every one refuses, naming each.
func TestClientBrokerList(t *testing.T) {
	a := startApp(t, "cli-list", beatNode)
	dead, dead2 := unreachable(t), unreachable(t)

	t.Setenv(BrokerEnv, "")
	echoOne(t, "robot/heartbeat", "-broker", dead, "-broker", a.url)
	echoOne(t, "-broker", a.url, "-broker", dead, "robot/heartbeat")

	t.Setenv(BrokerEnv, dead+","+a.url)
	echoOne(t, "robot/heartbeat")

	t.Setenv(BrokerEnv, "")
	cfg := filepath.Join(t.TempDir(), "cluster.yaml")
	writeFile(t, cfg, "mqtt:\n  broker:\n    - "+dead+"\n    - "+a.url+"\n")
	echoOne(t, "-config", cfg, "robot/heartbeat")

	r := cli(t, "pub", "-broker", dead, "-broker", dead2, "-timeout", "30s", "a/b", "x")
	require.Equal(t, ExitFailure, r.code, "%s", r)
	require.Contains(t, r.stderr, "connect to "+dead+": ", "%s", r)
	require.Contains(t, r.stderr, "connect to "+dead2+": ", "%s", r)
	require.Contains(t, r.stderr, "connection refused", "%s", r)
}
