package robotexec_test

// End-to-end tests of validate, and of run with bad configs.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// badConfig is a config that validate and run must reject with exactly
// these lines on stderr; FILE stands for the config's path.
type badConfig struct {
	name, file string
	want       []string
}

var badConfigs = []badConfig{
	{"malformed YAML", "malformed.yaml", []string{
		`FILE:6: invalid YAML: did not find expected ',' or '}'`,
	}},
	{"unknown key", "unknown_key.yaml", []string{
		`FILE:4: mqtt.ping_interval: unknown key (known keys: broker, listen, client_id, username, password, qos, protocol, clean_session, session_expiry, keepalive, max_payload, linger, tls, users, allow_anonymous, max_connections)`,
	}},
	{"unknown node type", "unknown_type.yaml", []string{
		`FILE:8: nodes[1].type: unknown node type "lidar" (known: bridge, heartbeat, imu_filter, sim_imu, sim_odom, sink, stage, watchdog)`,
	}},
	{"misspelt node type", "misspelt_type.yaml", []string{
		`FILE:5: nodes[0].type: unknown node type "hearbeat"; did you mean "heartbeat"?`,
	}},
	{"bad params", "bad_params.yaml", []string{
		`FILE:11: nodes[1].params.period: "fast" is not a duration`,
	}},
	{"constructor error", "constructor.yaml", []string{
		`FILE:4: nodes[0]: heartbeat (heartbeat): topic is required`,
	}},
	{"missing env var", "missing_env.yaml", []string{
		`FILE:3: mqtt.username: environment variable MQTT_USER is not set`,
	}},
	{"duplicate node names", "duplicate_names.yaml", []string{
		`FILE:10: nodes[2].name: duplicate node name "heartbeat" (first at line 4)`,
	}},
	{"every error in one run", "many.yaml", []string{
		`FILE:3: executor.workerz: unknown key; did you mean "workers"?`,
		`FILE:6: mqtt.username: environment variable MQTT_USER is not set`,
		`FILE:9: nodes[0].type: unknown node type "lidar" (known: bridge, heartbeat, imu_filter, sim_imu, sim_odom, sink, stage, watchdog)`,
		`FILE:12: nodes[1].params.period: "fast" is not a duration`,
		`FILE:13: nodes[2]: silent (heartbeat): topic is required`,
		`FILE:16: nodes[3].name: duplicate node name "heartbeat" (first at line 10)`,
		`FILE:18: nodes[3].params.colour: unknown key (known keys: from, to, qos, retain, max_rate, json, max_topics)`,
	}},
	{"bad topics", "bad_topic.yaml", []string{
		`FILE:4: nodes[0]: watchdog (watchdog): executor: watchdog: subscribers: topic filter "robot/#/data": '#' must be the last level`,
		`FILE:7: nodes[1]: bridge (bridge): to "robot/+/+/data" has 2 wildcards, from "sensors/+/raw" only 1`,
	}},
	{"negative priority", "negative_priority.yaml", []string{
		`FILE:6: nodes[0].priority: -1 is negative: 0 is the lowest priority`,
	}},
	{"missing file", "does_not_exist.yaml", []string{
		`FILE: no such file or directory`,
	}},
}

func (b badConfig) stderr(path string) string {
	return strings.ReplaceAll(strings.Join(b.want, "\n"), "FILE", path) + "\n"
}

func TestValidate(t *testing.T) {
	t.Parallel()
	t.Run("valid", func(t *testing.T) {
		t.Parallel()
		r := runCmd(t, quickExit, robotexecBin, nil, "validate", "testdata/valid.yaml")
		require.Equal(t, 0, r.code, "%s", r)
		require.Empty(t, r.stderr)
		require.Contains(t, r.stdout, "testdata/valid.yaml")
		require.Contains(t, r.stdout, "valid")
	})
	t.Run("examples/config.yaml", func(t *testing.T) {
		t.Parallel()
		r := runCmd(t, quickExit, robotexecBin, nil, "validate", "examples/config.yaml")
		require.Equal(t, 0, r.code, "%s", r)
		require.Empty(t, r.stderr)
		require.Contains(t, r.stdout, "examples/config.yaml")
	})
	t.Run("env var set", func(t *testing.T) {
		t.Parallel()
		r := runCmd(t, quickExit, robotexecBin, []string{"MQTT_USER=robot"}, "validate", "testdata/bad/missing_env.yaml")
		require.Equal(t, 0, r.code, "${MQTT_USER} is set now\n%s", r)
	})
	t.Run("directory", func(t *testing.T) {
		t.Parallel()
		r := runCmd(t, quickExit, robotexecBin, nil, "validate", "testdata/bad")
		require.Equal(t, 2, r.code, "%s", r)
		require.Empty(t, r.stdout)
		require.Equal(t, "testdata/bad: is a directory\n", r.stderr)
	})
	for _, b := range badConfigs {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			path := "testdata/bad/" + b.file
			r := runCmd(t, quickExit, robotexecBin, nil, "validate", path)
			require.Equal(t, 2, r.code, "%s", r)
			require.Empty(t, r.stdout)
			require.Equal(t, b.stderr(path), r.stderr)
		})
	}
}

func TestRunBadConfig(t *testing.T) {
	t.Parallel()
	for _, b := range badConfigs {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			port := freePort(t)
			var path string
			if _, err := os.Stat(filepath.Join("testdata/bad", b.file)); errors.Is(err, os.ErrNotExist) {
				path = filepath.Join(t.TempDir(), b.file)
			} else {
				path = configOnPort(t, filepath.Join("testdata/bad", b.file), port)
			}
			r := runCmd(t, quickExit, robotexecBin, nil, "run", path)
			require.Equal(t, 2, r.code, "%s", r)
			require.Empty(t, r.stdout)
			// Exactly the config's errors: no log line, so nothing started.
			require.Equal(t, b.stderr(path), r.stderr)
			requirePortFree(t, port)
		})
	}
	badFlags := []struct {
		name  string
		flags []string
		want  string
	}{
		{"bad -log-level", []string{"-log-level", "loud"}, `robotexec run: -log-level "loud": want debug, info, warn or error`},
		{"bad -log-format", []string{"-log-format", "xml"}, `robotexec run: -log-format "xml": want text or json`},
	}
	for _, f := range badFlags {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			port := freePort(t)
			path := configOnPort(t, "testdata/valid.yaml", port)
			r := runCmd(t, quickExit, robotexecBin, nil, append(append([]string{"run"}, f.flags...), path)...)
			require.Equal(t, 2, r.code, "%s", r)
			require.Empty(t, r.stdout)
			require.Equal(t, f.want+"\n", r.stderr)
			requirePortFree(t, port)
		})
	}
}
