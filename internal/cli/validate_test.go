package cli

// Tests of validate, and of run up to the start of the config: bad
// configs, bad flags and failed starts. A run that starts blocks until
// SIGINT or SIGTERM, which only the end-to-end tests (../../*_cli_test.go)
// send, to a process of their own.

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// unsetVar is an environment variable that no environment sets.
const unsetVar = "ROBOTEXEC_CLI_TEST_NEVER_SET"

// badConfigs are configs that validate and run reject with exactly these
// lines on stderr; FILE stands for the config's path, KNOWN for the
// registered node types.
var badConfigs = []struct {
	name, config string
	want         []string
}{
	{"malformed YAML", "mqtt:\n  listen: 127.0.0.1:1883\nnodes:\n  - name: heartbeat\n    type: heartbeat\n" +
		"    params: { topic: robot/heartbeat, period: 1s\n  - name: other\n    type: heartbeat\n", []string{
		`FILE:6: invalid YAML: did not find expected ',' or '}'`,
	}},
	{"unknown key", "mqtt:\n  listen: 127.0.0.1:1883\n  qos: 1\n  ping_interval: 30s\nnodes: []\n", []string{
		`FILE:4: mqtt.ping_interval: unknown key (known keys: broker, listen, client_id, username, password, qos, protocol, clean_session, session_expiry, keepalive, max_payload, linger, tls, users, allow_anonymous, max_connections)`,
	}},
	{"unknown node type", "nodes:\n  - name: heartbeat\n    type: heartbeat\n    params: { topic: robot/heartbeat }\n" +
		"  - name: front_lidar\n    type: lidar\n", []string{
		`FILE:6: nodes[1].type: unknown node type "lidar" (known: KNOWN)`,
	}},
	{"bad params", "nodes:\n  - name: heartbeat\n    type: heartbeat\n    params:\n      topic: robot/heartbeat\n      period: fast\n", []string{
		`FILE:6: nodes[0].params.period: "fast" is not a duration`,
	}},
	{"constructor error", "nodes:\n  - name: heartbeat\n    type: heartbeat\n    params: { period: 1s }\n", []string{
		`FILE:2: nodes[0]: heartbeat (heartbeat): topic is required`,
	}},
	{"missing env var", "mqtt:\n  username: ${" + unsetVar + "}\nnodes: []\n", []string{
		`FILE:2: mqtt.username: environment variable ` + unsetVar + ` is not set`,
	}},
	{"every error at once", "executor:\n  workerz: 2\nnodes:\n" +
		"  - name: hb\n    type: heartbeat\n    params: { topic: robot/heartbeat, period: fast }\n" +
		"  - name: hb\n    type: bridge\n    params: { from: sensors/+/raw, to: robot/+/data, colour: red }\n", []string{
		`FILE:2: executor.workerz: unknown key; did you mean "workers"?`,
		`FILE:6: nodes[0].params.period: "fast" is not a duration`,
		`FILE:7: nodes[1].name: duplicate node name "hb" (first at line 4)`,
		`FILE:9: nodes[1].params.colour: unknown key (known keys: from, to, qos, retain, max_rate, json, max_topics)`,
	}},
	{"bridge loop", "nodes:\n  - name: echo_chamber\n    type: bridge\n    params: { from: robot/#, to: robot/in/# }\n", []string{
		`FILE:2: nodes[0]: echo_chamber (bridge): to "robot/in/#" can match from "robot/#": the bridge would forward its own output, again and again`,
	}},
}

// TestBadConfig: validate and run report every problem of a config as
// FILE:LINE: FIELD: MESSAGE on stderr, print nothing else and exit 2.
func TestBadConfig(t *testing.T) {
	t.Parallel()
	for _, b := range badConfigs {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "config.yaml")
			writeFile(t, path, b.config)
			want := strings.NewReplacer("FILE", path, "KNOWN", strings.Join(app.TypeNames(), ", ")).Replace(strings.Join(b.want, "\n")) + "\n"
			for _, cmd := range []string{"validate", "run"} {
				r := cli(t, cmd, path)
				require.Equal(t, ExitUsage, r.code, "%s %s", cmd, r)
				require.Empty(t, r.stdout, cmd)
				require.Equal(t, want, r.stderr, cmd)
			}
		})
	}
}

// TestBadConfigFile: a config that is no readable file is exit 2, naming
// it.
func TestBadConfigFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	writeFile(t, big, "# padding\n"+strings.Repeat("#", 1<<20)+"\n")
	for _, tc := range []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "none.yaml"), filepath.Join(dir, "none.yaml") + ": no such file or directory\n"},
		{"directory", dir, dir + ": is a directory\n"},
		{"device", "/dev/zero", "/dev/zero: is not a regular file (a character device)\n"},
		{"over 1 MiB", big, big + ": is 1048587 bytes, over the limit of 1048576 (1 MiB)\n"},
	} {
		for _, cmd := range []string{"validate", "run"} {
			r := cli(t, cmd, tc.path)
			require.Equal(t, ExitUsage, r.code, "%s %s: %s", cmd, tc.name, r)
			require.Equal(t, tc.want, r.stderr, "%s %s", cmd, tc.name)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := filepath.Join(dir, "one.yaml")
	writeFile(t, one, "mqtt:\n  client_id: cli-${"+unsetVar+":-default}\nnodes:\n"+
		"  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 100ms } }\n")
	two := filepath.Join(dir, "two.yaml")
	writeFile(t, two, "nodes:\n  - { name: beat, type: heartbeat, params: { topic: a } }\n"+
		"  - { name: relay, type: bridge, params: { from: sensors/+/raw, to: robot/+/data, json: true } }\n")
	for path, want := range map[string]string{
		one:                          one + ": valid, 1 node\n",
		two:                          two + ": valid, 2 nodes\n",
		"../../examples/config.yaml": "../../examples/config.yaml: valid, 6 nodes\n",
	} {
		r := cli(t, "validate", path)
		require.Equal(t, ExitOK, r.code, "%s", r)
		require.Equal(t, want, r.stdout)
		require.Empty(t, r.stderr)
	}
	for _, args := range [][]string{{"validate"}, {"validate", one, two}} {
		r := cli(t, args...)
		require.Equal(t, ExitUsage, r.code, "%s", r)
		require.Contains(t, r.stderr, "robotexec validate: want one CONFIG argument")
		require.Contains(t, r.stderr, "Usage: robotexec validate CONFIG")
	}
}

// validConfig writes a valid config whose embedded broker listens on
// port, with metrics on mport when not 0.
func validConfig(t *testing.T, port, mport int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	metrics := ""
	if mport != 0 {
		metrics = fmt.Sprintf("metrics: { listen: 127.0.0.1:%d }\n", mport)
	}
	writeFile(t, path, fmt.Sprintf("mqtt: { broker: embedded, listen: 127.0.0.1:%d, client_id: cli-run-test }\n%s"+
		"nodes:\n  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 100ms } }\n", port, metrics))
	return path
}

// TestRunArgs: run's command line is checked before the config is read.
func TestRunArgs(t *testing.T) {
	t.Parallel()
	config := validConfig(t, mqtttest.FreePort(t), 0)
	missingDir := filepath.Join(t.TempDir(), "none")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no config", nil, ExitUsage, "robotexec run: want one CONFIG argument\nUsage: robotexec run [flags] CONFIG"},
		{"two configs", []string{config, config}, ExitUsage, "robotexec run: want one CONFIG argument"},
		{"bad -log-level", []string{"-log-level", "loud", config}, ExitUsage, `robotexec run: -log-level "loud": want debug, info, warn or error` + "\n"},
		{"bad -log-format", []string{"-log-format", "xml", config}, ExitUsage, `robotexec run: -log-format "xml": want text or json` + "\n"},
		{"-trace-runs 0", []string{"-trace", filepath.Join(missingDir, "t.json"), "-trace-runs", "0", config}, ExitUsage, "robotexec run: -trace-runs 0: want a positive number\n"},
		{"-trace in no directory", []string{"-trace", filepath.Join(missingDir, "t.json"), config}, ExitFailure, "robotexec run: -trace: open " + missingDir + "/t.json: no such file or directory\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := cli(t, append([]string{"run"}, tc.args...)...)
			require.Equal(t, tc.code, r.code, "%s", r)
			require.Empty(t, r.stdout)
			if strings.HasSuffix(tc.want, "\n") {
				require.Equal(t, tc.want, r.stderr, "exactly the one error: nothing started")
			} else {
				require.Contains(t, r.stderr, tc.want)
			}
		})
	}
}

// TestRunStartFails: a config that cannot start (its broker's or its
// metrics' port taken, a -record file that cannot be created) is a
// runtime failure, exit 1, naming the cause, with nothing left running and
// no -trace file left behind.
func TestRunStartFails(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { taken.Close() }) // after the parallel subtests
	busy := taken.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		flags  []string
		config string
		want   []string
	}{
		{"broker port taken", nil, validConfig(t, busy, 0),
			[]string{fmt.Sprintf("robotexec run: embedded broker on 127.0.0.1:%d", busy), "address already in use"}},
		{"metrics port taken", []string{"-log-format", "json"}, validConfig(t, mqtttest.FreePort(t), busy),
			[]string{fmt.Sprintf("robotexec run: metrics.listen: metrics: listen on 127.0.0.1:%d", busy), "address already in use"}},
		{"-record in no directory", []string{"-record", filepath.Join(dir, "none", "run.mcap")}, validConfig(t, mqtttest.FreePort(t), 0),
			[]string{"robotexec run: -record: ", "no such file or directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			trace := filepath.Join(t.TempDir(), "trace.json")
			args := append(append([]string{"run", "-trace", trace}, tc.flags...), tc.config)
			r := cli(t, args...)
			require.Equal(t, ExitFailure, r.code, "%s", r)
			require.Empty(t, r.stdout)
			for _, w := range tc.want {
				require.Contains(t, r.stderr, w)
			}
			require.NotContains(t, r.stderr, "robotexec running")
			_, err := os.Stat(trace)
			require.ErrorIs(t, err, os.ErrNotExist, "no empty trace file left behind")
		})
	}
}
