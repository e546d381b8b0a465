package robotexec_test

// End-to-end tests of the robotexec command: TestMain builds the real
// binary from ./cmd/robotexec, and every test runs it as a user would,
// checking exit codes, stdout and stderr. The tests that run a config pick
// a free loopback port for its embedded broker and talk to it with the
// binary's own pub and echo commands.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// robotexecBin is the robotexec binary that TestMain builds.
var robotexecBin string

// Bounds of the waits: generous, so that a loaded machine does not fail the
// tests, yet short enough that a hang fails fast.
const (
	quickExit  = 10 * time.Second // a command that should end by itself
	startup    = 15 * time.Second // until "robotexec running"
	stopWithin = 5 * time.Second  // SIGINT/SIGTERM until exit: "a few seconds"
	traffic    = 15 * time.Second // until a message goes through
)

func TestMain(m *testing.M) { os.Exit(buildAndRun(m)) }

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "robotexec-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cli_test:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	robotexecBin = filepath.Join(dir, "robotexec")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goTool(), "build", "-o", robotexecBin, "./cmd/robotexec").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cli_test: go build ./cmd/robotexec: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(os.Getenv("GOROOT"), "bin", "go")
}

// ---------------------------------------------------------------------
// Command line

func TestCommandLine(t *testing.T) {
	t.Parallel()
	allCommands := []string{
		"robotexec run [flags] CONFIG", "robotexec validate CONFIG", "robotexec nodes",
		"robotexec pub ", "robotexec echo ", "robotexec version",
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string // substrings stdout must hold; nil: stdout must be empty
		stderr   []string // substrings stderr must hold; nil: stderr must be empty
		anyOther bool     // the other stream may hold anything
	}{
		{name: "no args", args: nil, code: 2, stderr: append([]string{"Usage:"}, allCommands...)},
		{name: "-h", args: []string{"-h"}, code: 0, stdout: append([]string{"Usage:"}, allCommands...)},
		{name: "-help", args: []string{"-help"}, code: 0, stdout: append([]string{"Usage:"}, allCommands...)},
		{name: "--help", args: []string{"--help"}, code: 0, stdout: append([]string{"Usage:"}, allCommands...)},
		{name: "help", args: []string{"help"}, code: 0, stdout: append([]string{"Usage:"}, allCommands...)},
		{name: "unknown command", args: []string{"fly"}, code: 2, stderr: []string{`robotexec: unknown command "fly"`, "Usage:"}},
		{name: "unknown flag before command", args: []string{"-v"}, code: 2, stderr: []string{`robotexec: unknown command "-v"`}},

		{name: "run -h", args: []string{"run", "-h"}, code: 0, stdout: []string{"Usage: robotexec run", "-log-format", "-log-level"}},
		{name: "validate -h", args: []string{"validate", "-h"}, code: 0, stdout: []string{"Usage: robotexec validate"}},
		{name: "nodes -h", args: []string{"nodes", "-h"}, code: 0, stdout: []string{"Usage: robotexec nodes"}},
		{name: "pub -h", args: []string{"pub", "-h"}, code: 0, stdout: []string{"Usage: robotexec pub", "-broker", "-qos", "-retain", "-timeout"}},
		{name: "echo -h", args: []string{"echo", "-h"}, code: 0, stdout: []string{"Usage: robotexec echo", "-broker", "-n", "-timeout"}},
		{name: "version -h", args: []string{"version", "-h"}, code: 0, stdout: []string{"Usage: robotexec version"}},
		{name: "run --help", args: []string{"run", "--help"}, code: 0, stdout: []string{"Usage: robotexec run"}},

		{name: "run without config", args: []string{"run"}, code: 2, stderr: []string{"robotexec run: want one CONFIG argument", "Usage: robotexec run"}},
		{name: "run with two configs", args: []string{"run", "a.yaml", "b.yaml"}, code: 2, stderr: []string{"robotexec run: want one CONFIG argument"}},
		{name: "run unknown flag", args: []string{"run", "-bogus", "a.yaml"}, code: 2, stderr: []string{"flag provided but not defined: -bogus", "Usage: robotexec run"}},
		{name: "validate without config", args: []string{"validate"}, code: 2, stderr: []string{"robotexec validate: want one CONFIG argument", "Usage: robotexec validate"}},
		{name: "validate with two configs", args: []string{"validate", "a.yaml", "b.yaml"}, code: 2, stderr: []string{"robotexec validate: want one CONFIG argument"}},
		{name: "pub with topic only", args: []string{"pub", "a/b"}, code: 2, stderr: []string{"robotexec pub: want TOPIC and PAYLOAD", "Usage: robotexec pub"}},
		{name: "pub with three args", args: []string{"pub", "a/b", "x", "y"}, code: 2, stderr: []string{"robotexec pub: want TOPIC and PAYLOAD"}},
		{name: "pub unknown flag", args: []string{"pub", "-bogus", "a/b", "x"}, code: 2, stderr: []string{"flag provided but not defined: -bogus"}},
		{name: "echo without filter", args: []string{"echo"}, code: 2, stderr: []string{"robotexec echo: want one TOPIC_FILTER", "Usage: robotexec echo"}},
		{name: "echo with two filters", args: []string{"echo", "a/#", "b/#"}, code: 2, stderr: []string{"robotexec echo: want one TOPIC_FILTER"}},
		// nodes and version take no arguments; an extra one is a usage
		// error like every other wrong argument count.
		{name: "nodes with an argument", args: []string{"nodes", "bridge"}, code: 2, stderr: []string{"Usage: robotexec nodes"}, anyOther: true},
		{name: "version with an argument", args: []string{"version", "v2"}, code: 2, stderr: []string{"Usage: robotexec version"}, anyOther: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCmd(t, quickExit, robotexecBin, nil, tt.args...)
			require.Equal(t, tt.code, r.code, "exit code of robotexec %s\n%s", strings.Join(tt.args, " "), r)
			checkStream(t, "stdout", r.stdout, tt.stdout, tt.anyOther)
			checkStream(t, "stderr", r.stderr, tt.stderr, tt.anyOther)
		})
	}
}

// checkStream checks that out holds every string of want, or that it is
// empty when want is nil (unless anyOther).
func checkStream(t *testing.T, name, out string, want []string, anyOther bool) {
	t.Helper()
	if want == nil {
		if !anyOther {
			require.Empty(t, out, "%s should be empty", name)
		}
		return
	}
	for _, w := range want {
		require.Contains(t, out, w, "%s", name)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	r := runCmd(t, quickExit, robotexecBin, nil, "version")
	require.Equal(t, 0, r.code, "%s", r)
	require.Empty(t, r.stderr)
	require.Regexp(t, `^robotexec \S+\n$`, r.stdout)
}

func TestNodes(t *testing.T) {
	t.Parallel()
	r := runCmd(t, quickExit, robotexecBin, nil, "nodes")
	require.Equal(t, 0, r.code, "%s", r)
	require.Empty(t, r.stderr)
	// The stock binary has the built-in types and the examples' ones, each
	// with a one-line description.
	types := []string{"bridge", "heartbeat", "watchdog", "imu_filter", "sim_imu", "sim_odom", "sink", "stage"}
	for _, typ := range types {
		require.Regexp(t, `(?m)^`+typ+`\s+\S.{9,}$`, r.stdout, "the line of %s, with its description", typ)
	}
	require.Regexp(t, `(?m)^imu_filter\s+low-pass filter for IMU samples$`, r.stdout, "SPEC.md's description of imu_filter")
	require.Len(t, lines(r.stdout), len(types), "one line per type:\n%s", r.stdout)
}

// ---------------------------------------------------------------------
// validate, and run with bad configs

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
		`FILE:4: mqtt.ping_interval: unknown key (known keys: broker, listen, client_id, username, password, qos, clean_session, keepalive, max_payload, tls, users, allow_anonymous)`,
	}},
	{"unknown node type", "unknown_type.yaml", []string{
		`FILE:8: nodes[1].type: unknown node type "lidar" (known: bridge, heartbeat, imu_filter, sim_imu, sim_odom, sink, stage, watchdog)`,
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

// ---------------------------------------------------------------------
// run with a good config

// TestRun runs testdata/valid.yaml (a heartbeat and a bridge) and talks to
// it with pub and echo, then stops it with SIGINT.
func TestRun(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	url := brokerURL(port)
	rx := startRun(t, robotexecBin, configOnPort(t, "testdata/valid.yaml", port))

	t.Run("echo heartbeat", func(t *testing.T) {
		r := runCmd(t, traffic, robotexecBin, nil, "echo", "-broker", url, "-timeout", "5s", "-n", "3", "robot/heartbeat")
		require.Equal(t, 0, r.code, "%s", r)
		ls := lines(r.stdout)
		require.Len(t, ls, 3, "echo -n 3 prints 3 lines:\n%s", r.stdout)
		var prev uint64
		for i, l := range ls {
			beat := parseBeat(t, l)
			require.Equal(t, "heartbeat", beat.Node, "the node's name")
			if i > 0 {
				require.Equal(t, prev+1, beat.Seq, "consecutive seq:\n%s", r.stdout)
			}
			prev = beat.Seq
		}
	})

	t.Run("pub retained then echo", func(t *testing.T) {
		r := runCmd(t, traffic, robotexecBin, nil, "pub", "-broker", url, "-timeout", "5s", "-qos", "1", "-retain", "robot/config", `{"v":1}`)
		require.Equal(t, 0, r.code, "%s", r)
		require.Empty(t, r.stdout)
		r = runCmd(t, traffic, robotexecBin, nil, "echo", "-broker", url, "-timeout", "5s", "-n", "1", "robot/config")
		require.Equal(t, 0, r.code, "%s", r)
		require.Equal(t, "robot/config {\"v\":1}\n", r.stdout)
	})

	t.Run("bridge", func(t *testing.T) {
		// echo subscribes at some point after it starts, so publish until it
		// has seen a message. The bridge has json: true: the invalid
		// payload, published first on the same topic, must never come out.
		echo := startProc(t, robotexecBin, nil, "echo", "-broker", url, "-timeout", "5s", "-n", "1", "robot/+/data")
		publishUntil(t, url, func() bool { return echo.hasExited() },
			pubMsg{"sensors/x7/raw", "not json"}, pubMsg{"sensors/x7/raw", `{"a":1}`})
		require.Equal(t, 0, echo.wait(t, quickExit))
		require.Equal(t, []string{`robot/x7/data {"a":1}`}, echo.stdout.all())
	})

	t.Run("echo stops on SIGINT", func(t *testing.T) {
		echo := startProc(t, robotexecBin, nil, "echo", "-broker", url, "-timeout", "5s", "robot/heartbeat")
		echo.stdout.waitFor(t, traffic, "robot/heartbeat ")
		echo.signal(t, os.Interrupt)
		require.Equal(t, 0, echo.wait(t, stopWithin), "echo exits 0 on SIGINT")
	})

	t.Run("SIGINT", func(t *testing.T) {
		rx.signal(t, os.Interrupt)
		require.Equal(t, 0, rx.wait(t, stopWithin), "clean stop")
		drain := rx.stderr.waitFor(t, time.Second, "draining")
		require.Contains(t, drain, "signal=interrupt")
		requireOrdered(t, rx.stderr.all(), "robotexec running", "draining", "stopped")
		require.Empty(t, rx.stdout.all(), "logs go to stderr")
		requirePortFree(t, port)
	})
}

func TestRunSIGTERM(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	rx := startRun(t, robotexecBin, configOnPort(t, "testdata/valid.yaml", port))
	rx.signal(t, syscall.SIGTERM)
	require.Equal(t, 0, rx.wait(t, stopWithin), "clean stop")
	drain := rx.stderr.waitFor(t, time.Second, "draining")
	require.Contains(t, drain, "signal=terminated")
	requireOrdered(t, rx.stderr.all(), "robotexec running", "draining", "stopped")
	requirePortFree(t, port)
}

// TestRunTwoSignals sends two signals back to back. With the built-in nodes
// the drain takes about a millisecond, so whether the second signal lands
// during the drain (exit 1, "second signal") or after it (exit 0, or
// killed by the SIGTERM once the process stopped catching signals on its
// way out) is a race; either way the process must end promptly. TestCustomBinary checks
// the second signal during a drain made slow on purpose.
func TestRunTwoSignals(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	rx := startRun(t, robotexecBin, configOnPort(t, "testdata/valid.yaml", port))
	rx.signal(t, os.Interrupt)
	rx.signal(t, syscall.SIGTERM)
	switch code := rx.wait(t, stopWithin); code {
	case 0:
		requireOrdered(t, rx.stderr.all(), "draining", "stopped")
	case 1:
		rx.stderr.waitFor(t, time.Second, "second signal")
	case -1:
		// The second signal came after the drain, as the process was
		// exiting and no longer caught signals: SIGTERM ended it.
		requireOrdered(t, rx.stderr.all(), "draining", "stopped")
		ws, ok := rx.cmd.ProcessState.Sys().(syscall.WaitStatus)
		require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM, "%s", rx)
	default:
		t.Fatalf("exit code %d, want 0 or 1\n%s", code, rx)
	}
}

func TestRunJSONLogs(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	rx := startRun(t, robotexecBin, configOnPort(t, "testdata/valid.yaml", port), "-log-format", "json", "-log-level", "debug")
	rx.signal(t, os.Interrupt)
	require.Equal(t, 0, rx.wait(t, stopWithin))
	all := rx.stderr.all()
	require.NotEmpty(t, all)
	msgs := map[string]bool{}
	for _, l := range all {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &rec), "a JSON log line: %s", l)
		for _, k := range []string{"time", "level", "msg"} {
			require.Contains(t, rec, k, "log line %s", l)
		}
		msgs[rec["msg"].(string)] = true
	}
	require.True(t, msgs["robotexec running"], "logs: %q", all)
	require.True(t, msgs["stopped"], "logs: %q", all)
}

// TestRunPortInUse runs a config whose embedded broker cannot listen: a
// runtime failure, exit 1, naming the address.
func TestRunPortInUse(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	r := runCmd(t, quickExit, robotexecBin, nil, "run", configOnPort(t, "testdata/valid.yaml", port))
	require.Equal(t, 1, r.code, "%s", r)
	require.Contains(t, r.stderr, fmt.Sprintf("127.0.0.1:%d", port))
	require.Contains(t, r.stderr, "address already in use")
	require.NotContains(t, r.stderr, "robotexec running")
}

// TestRunUnreachableBroker runs a config whose external broker does not
// answer: robotexec keeps retrying, and a signal still stops it cleanly.
func TestRunUnreachableBroker(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	rx := startRun(t, robotexecBin, configOnPort(t, "testdata/external_broker.yaml", port))
	rx.signal(t, os.Interrupt)
	require.Equal(t, 0, rx.wait(t, stopWithin), "clean stop without a broker")
	requireOrdered(t, rx.stderr.all(), "robotexec running", "draining", "stopped")
}

// ---------------------------------------------------------------------
// pub and echo

func TestPubEchoErrors(t *testing.T) {
	t.Parallel()
	dead := brokerURL(freePort(t))
	conn := []string{"-broker", dead, "-timeout", "1s"}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"pub without broker", []string{"pub", "a/b", "x"}, 1, []string{"robotexec pub: ", dead}},
		{"echo without broker", []string{"echo", "a/#"}, 1, []string{"robotexec echo: ", dead}},
		{"pub wildcard topic", []string{"pub", "a/+/b", "x"}, 2, []string{"robotexec pub: ", `"a/+/b"`, "wildcards"}},
		{"pub hash topic", []string{"pub", "a/#", "x"}, 2, []string{"robotexec pub: ", `"a/#"`}},
		{"pub empty topic", []string{"pub", "", "x"}, 2, []string{"robotexec pub: "}},
		{"echo bad filter", []string{"echo", "a/#/b"}, 2, []string{"robotexec echo: ", `"a/#/b"`, "'#' must be the last level"}},
		{"echo bad plus", []string{"echo", "a/b+/c"}, 2, []string{"robotexec echo: ", `"a/b+/c"`}},
		{"pub -qos 3", []string{"pub", "-qos", "3", "a/b", "x"}, 2, []string{"robotexec pub: -qos 3: want 0, 1 or 2"}},
		{"pub -qos -1", []string{"pub", "-qos", "-1", "a/b", "x"}, 2, []string{"-qos -1"}},
		{"pub -qos x", []string{"pub", "-qos", "x", "a/b", "x"}, 2, []string{`invalid value "x" for flag -qos`}},
		{"echo -qos 3", []string{"echo", "-qos", "3", "a/b"}, 2, []string{"robotexec echo: -qos"}},
		{"echo -n -1", []string{"echo", "-n", "-1", "a/b"}, 2, []string{"robotexec echo: ", "-n"}},
		{"echo -n x", []string{"echo", "-n", "x", "a/b"}, 2, []string{`invalid value "x" for flag -n`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The connection flags go first, so that a usage error is
			// found before any connection attempt, which would take 1s.
			args := append(append([]string{tt.args[0]}, conn...), tt.args[1:]...)
			start := time.Now()
			r := runCmd(t, quickExit, robotexecBin, nil, args...)
			require.Equal(t, tt.code, r.code, "%s", r)
			require.Empty(t, r.stdout)
			for _, w := range tt.stderr {
				require.Contains(t, r.stderr, w)
			}
			if tt.code == 1 {
				require.Less(t, time.Since(start), 5*time.Second, "-timeout 1s")
			}
		})
	}
}

// ---------------------------------------------------------------------
// examples/config.yaml, the README's command

func TestExampleConfig(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	rx := startRun(t, robotexecBin, configOnPort(t, "examples/config.yaml", port))
	url := brokerURL(port)

	line := rx.stderr.waitFor(t, traffic, `msg="filtered imu"`)
	require.Contains(t, line, "node=imu_filter")

	r := runCmd(t, traffic, robotexecBin, nil, "echo", "-broker", url, "-timeout", "5s", "-n", "1", "robot/imu0/filtered")
	require.Equal(t, 0, r.code, "%s", r)
	topic, payload, ok := strings.Cut(strings.TrimSuffix(r.stdout, "\n"), " ")
	require.True(t, ok, "TOPIC PAYLOAD: %q", r.stdout)
	require.Equal(t, "robot/imu0/filtered", topic)
	var filtered struct {
		AZ      float64 `json:"az"`
		Samples uint64  `json:"samples"`
	}
	require.NoError(t, json.Unmarshal([]byte(payload), &filtered), "payload %s", payload)
	require.Positive(t, filtered.Samples, "the filter has blended samples: %s", payload)
	require.InDelta(t, 9.81, filtered.AZ, 0.5, "gravity on z: %s", payload)

	rx.signal(t, os.Interrupt)
	require.Equal(t, 0, rx.wait(t, stopWithin))
	requireOrdered(t, rx.stderr.all(), "robotexec running", "draining", "stopped")
}

// ---------------------------------------------------------------------
// A custom binary, as SPEC.md's "Node API" shows it

// specNode is SPEC.md's Node API example, verbatim.
const specNode = `package imufilter

import (
	"time"

	"github.com/robotexec/robotexec/nodes"
)

func init() { nodes.Register("imu_filter", "low-pass filter for IMU samples", New) }

type Params struct {
	Input  string        ` + "`yaml:\"input\"`" + `
	Output string        ` + "`yaml:\"output\"`" + `
	Alpha  float64       ` + "`yaml:\"alpha\"`" + `
	Period time.Duration ` + "`yaml:\"period\"`" + `
}

type Sample struct{ AX, AY, AZ float64 }

func New(n *nodes.Node) error {
	p := Params{Alpha: 0.2, Period: 50 * time.Millisecond}
	if err := n.Params(&p); err != nil { // strict decode, defaults kept
		return err
	}
	out := n.Publisher(p.Output)
	var avg Sample
	nodes.Subscribe(n, p.Input, func(s Sample) { avg = blend(avg, s, p.Alpha) })
	n.Timer(p.Period, func(nodes.TimerEvent) { out.PublishJSON(avg) })
	return nil // callbacks of one node share its default mutually exclusive group
}
`

// specBlend is the blend that SPEC.md's example leaves to the user.
const specBlend = `package imufilter

// blend returns the exponential moving average of avg and s with weight a.
func blend(avg, s Sample, a float64) Sample {
	mix := func(x, y float64) float64 { return x + a*(y-x) }
	return Sample{AX: mix(avg.AX, s.AX), AY: mix(avg.AY, s.AY), AZ: mix(avg.AZ, s.AZ)}
}
`

// slowStop is a test node in the same package: its shutdown function
// blocks, so that a drain is slow on purpose and a second signal must cut
// it short.
const slowStop = `package imufilter

import (
	"time"

	"github.com/robotexec/robotexec/nodes"
)

func init() { nodes.Register("slow_stop", "test node whose shutdown takes a minute", newSlowStop) }

func newSlowStop(n *nodes.Node) error {
	n.OnShutdown(func() {
		n.Logger().Info("slow_stop: shutting down slowly")
		time.Sleep(time.Minute)
	})
	return nil
}
`

// specMain is SPEC.md's custom binary, verbatim.
const specMain = `package main

import (
	"github.com/robotexec/robotexec"
	_ "example.com/mynodes/imufilter"
)

func main() { robotexec.Main() }
`

const customConfig = `mqtt:
  listen: 127.0.0.1:1883
nodes:
  - name: filter
    type: imu_filter
    params: { input: imu/raw, output: imu/filtered, alpha: 0.5, period: 50ms }
`

const slowStopConfig = `mqtt:
  listen: 127.0.0.1:1883
nodes:
  - name: filter
    type: imu_filter
    params: { input: imu/raw, output: imu/filtered }
  - name: slow
    type: slow_stop
`

func TestCustomBinary(t *testing.T) {
	t.Parallel()
	bin := buildCustomBinary(t)

	t.Run("nodes", func(t *testing.T) {
		r := runCmd(t, quickExit, bin, nil, "nodes")
		require.Equal(t, 0, r.code, "%s", r)
		require.Regexp(t, `(?m)^imu_filter\s+low-pass filter for IMU samples$`, r.stdout)
		for _, typ := range []string{"bridge", "heartbeat", "watchdog", "slow_stop"} {
			require.Regexp(t, `(?m)^`+typ+`\s+\S`, r.stdout)
		}
		require.NotContains(t, r.stdout, "sim_imu", "only the built-in types and the binary's own")
	})

	t.Run("validate", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "config.yaml")
		writeFile(t, path, "nodes:\n  - name: filter\n    type: imu_filter\n    params:\n      input: imu/raw\n      colour: red\n")
		r := runCmd(t, quickExit, bin, nil, "validate", path)
		require.Equal(t, 2, r.code, "%s", r)
		require.Equal(t, path+":6: nodes[0].params.colour: unknown key (known keys: input, output, alpha, period)\n", r.stderr,
			"n.Params decodes strictly")
	})

	t.Run("filter", func(t *testing.T) {
		t.Parallel()
		port := freePort(t)
		url := brokerURL(port)
		path := filepath.Join(t.TempDir(), "config.yaml")
		writeFile(t, path, strings.Replace(customConfig, "127.0.0.1:1883", fmt.Sprintf("127.0.0.1:%d", port), 1))
		rx := startRun(t, bin, path)

		echo := startProc(t, robotexecBin, nil, "echo", "-broker", url, "-timeout", "5s", "imu/filtered")
		blended := func(l string) bool { return strings.HasPrefix(l, "imu/filtered ") && !strings.Contains(l, `"AX":0,`) }
		publishUntil(t, url, func() bool { _, ok := echo.stdout.find(blended); return ok },
			pubMsg{"imu/raw", `{"AX":1,"AY":2,"AZ":3}`})
		line, _ := echo.stdout.find(blended)
		var s struct{ AX, AY, AZ float64 }
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "imu/filtered ")), &s), "line %s", line)
		// The average moves from zero towards (1, 2, 3) along the line
		// through both, by alpha per sample.
		require.Greater(t, s.AX, 0.0, line)
		require.LessOrEqual(t, s.AX, 1.0, line)
		require.InDelta(t, 2*s.AX, s.AY, 1e-9, line)
		require.InDelta(t, 3*s.AX, s.AZ, 1e-9, line)

		echo.signal(t, os.Interrupt)
		require.Equal(t, 0, echo.wait(t, stopWithin))
		rx.signal(t, os.Interrupt)
		require.Equal(t, 0, rx.wait(t, stopWithin))
		requireOrdered(t, rx.stderr.all(), "robotexec running", "draining", "stopped")
	})

	t.Run("second signal during a slow drain", func(t *testing.T) {
		t.Parallel()
		port := freePort(t)
		path := filepath.Join(t.TempDir(), "config.yaml")
		writeFile(t, path, strings.Replace(slowStopConfig, "127.0.0.1:1883", fmt.Sprintf("127.0.0.1:%d", port), 1))
		rx := startRun(t, bin, path)
		rx.signal(t, os.Interrupt)
		rx.stderr.waitFor(t, stopWithin, "slow_stop: shutting down slowly")
		rx.signal(t, os.Interrupt)
		require.Equal(t, 1, rx.wait(t, 3*time.Second), "a second signal exits at once")
		line := rx.stderr.waitFor(t, time.Second, "second signal")
		require.Contains(t, line, "exiting now")
		require.NotContains(t, strings.Join(rx.stderr.all(), "\n"), "msg=stopped")
	})
}

// buildCustomBinary builds SPEC.md's custom binary in a temporary module
// whose go.mod replaces github.com/robotexec/robotexec with this checkout.
func buildCustomBinary(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(goMod)
	require.NotNil(t, goLine, "the go directive of the checkout's go.mod")

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), fmt.Sprintf(
		"module example.com/mynodes\n\n%s\n\nrequire github.com/robotexec/robotexec v0.0.0-00010101000000-000000000000\n\nreplace github.com/robotexec/robotexec => %s\n",
		goLine, strconv.Quote(root)))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	writeFile(t, filepath.Join(dir, "go.sum"), string(sum))
	writeFile(t, filepath.Join(dir, "main.go"), specMain)
	writeFile(t, filepath.Join(dir, "imufilter", "imufilter.go"), specNode)
	writeFile(t, filepath.Join(dir, "imufilter", "blend.go"), specBlend)
	writeFile(t, filepath.Join(dir, "imufilter", "slowstop.go"), slowStop)

	bin := filepath.Join(dir, "mybin")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool(), "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build of the custom binary (%v):\n%s", ctx.Err(), out)
	return bin
}

// repoRoot returns the directory of the checkout's go.mod, found from the
// test's working directory upwards.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module github.com/robotexec/robotexec\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod of github.com/robotexec/robotexec above the working directory")
		dir = parent
	}
}

// ---------------------------------------------------------------------
// Helpers: processes and their output

// lineLog collects the lines a process writes, for tests to wait on. It is
// the process's stdout or stderr: exec copies into it from its own
// goroutine.
type lineLog struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
	eof     bool
	changed chan struct{} // closed at each new line, and at EOF
}

func newLineLog() *lineLog { return &lineLog{changed: make(chan struct{})} }

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	added := false
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
		added = true
	}
	if added {
		close(l.changed)
		l.changed = make(chan struct{})
	}
	return len(p), nil
}

// close marks the end of the output, once the process has exited.
func (l *lineLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.partial) > 0 {
		l.lines = append(l.lines, string(l.partial))
		l.partial = nil
	}
	l.eof = true
	close(l.changed)
}

// all returns the lines so far.
func (l *lineLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// find returns the first line so far that match accepts.
func (l *lineLog) find(match func(string) bool) (string, bool) {
	for _, s := range l.all() {
		if match(s) {
			return s, true
		}
	}
	return "", false
}

// await waits until a line matches, the output ends or ctx ends.
func (l *lineLog) await(ctx context.Context, match func(string) bool) (string, error) {
	for {
		l.mu.Lock()
		lines, eof, changed := l.lines, l.eof, l.changed
		l.mu.Unlock()
		for _, s := range lines {
			if match(s) {
				return s, nil
			}
		}
		if eof {
			return "", errors.New("the output ended")
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// waitFor waits up to timeout for a line that holds substr and returns it.
func (l *lineLog) waitFor(t *testing.T, timeout time.Duration, substr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	line, err := l.await(ctx, func(s string) bool { return strings.Contains(s, substr) })
	if err != nil {
		t.Fatalf("waiting %v for a line with %q: %v; the lines:\n%s", timeout, substr, err, strings.Join(l.all(), "\n"))
	}
	return line
}

// proc is a running command.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr *lineLog
	exited         chan struct{} // closed when it has exited and its output is read
}

// startProc starts bin with args, in the environment of the test without
// the variables the configs use, plus env. The process is killed at the
// end of the test if it still runs.
func startProc(t *testing.T, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{
		cmd:    exec.Command(bin, args...),
		stdout: newLineLog(),
		stderr: newLineLog(),
		exited: make(chan struct{}),
	}
	p.cmd.Env = append(testEnv(), env...)
	p.cmd.Stdout = p.stdout
	p.cmd.Stderr = p.stderr
	p.cmd.WaitDelay = 5 * time.Second
	require.NoError(t, p.cmd.Start())
	go func() {
		_ = p.cmd.Wait() // the exit status is in cmd.ProcessState
		p.stdout.close()
		p.stderr.close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		if !p.hasExited() {
			_ = p.cmd.Process.Kill()
			select {
			case <-p.exited:
			case <-time.After(quickExit):
				t.Errorf("%s: still running after SIGKILL", p.name())
			}
		}
		if t.Failed() {
			t.Logf("%s:\n%s", p.name(), p)
		}
	})
	return p
}

func (p *proc) name() string { return strings.Join(p.cmd.Args, " ") }

// String returns the command line, stdout and stderr, for messages.
func (p *proc) String() string {
	return fmt.Sprintf("$ %s\n--- stdout\n%s\n--- stderr\n%s", p.name(),
		strings.Join(p.stdout.all(), "\n"), strings.Join(p.stderr.all(), "\n"))
}

func (p *proc) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

func (p *proc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(sig), "signal %v to %s", sig, p.name())
}

// wait waits up to timeout for the process to exit and returns its exit
// code.
func (p *proc) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		t.Fatalf("%s did not exit within %v\n%s", p.name(), timeout, p)
		return -1
	}
}

// result is what a command that ended printed, and its exit code.
type result struct {
	cmd            string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("$ %s\n--- exit %d\n--- stdout\n%s--- stderr\n%s", r.cmd, r.code, r.stdout, r.stderr)
}

// runCmd runs bin with args until it exits, at most timeout.
func runCmd(t *testing.T, timeout time.Duration, bin string, env []string, args ...string) result {
	t.Helper()
	p := startProc(t, bin, env, args...)
	code := p.wait(t, timeout)
	join := func(ls []string) string {
		if len(ls) == 0 {
			return ""
		}
		return strings.Join(ls, "\n") + "\n"
	}
	return result{cmd: p.name(), stdout: join(p.stdout.all()), stderr: join(p.stderr.all()), code: code}
}

// startRun starts robotexec run CONFIG and waits until it is running.
func startRun(t *testing.T, bin, config string, flags ...string) *proc {
	t.Helper()
	p := startProc(t, bin, nil, append(append([]string{"run"}, flags...), config)...)
	p.stderr.waitFor(t, startup, "robotexec running")
	return p
}

type pubMsg struct{ topic, payload string }

// publishUntil publishes msgs in turn with robotexec pub -qos 1, again and
// again, until done returns true; it fails the test if that takes longer
// than traffic. A subscriber's subscription is not visible from outside,
// so publishing again is how to be sure it gets a message.
func publishUntil(t *testing.T, url string, done func() bool, msgs ...pubMsg) {
	t.Helper()
	deadline := time.Now().Add(traffic)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		require.True(t, time.Now().Before(deadline), "no message went through within %v", traffic)
		for _, m := range msgs {
			r := runCmd(t, quickExit, robotexecBin, nil, "pub", "-broker", url, "-timeout", "5s", "-qos", "1", m.topic, m.payload)
			require.Equal(t, 0, r.code, "%s", r)
		}
		<-tick.C
	}
}

// testEnv is the test's environment without the variables that the
// configs expand.
func testEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "MQTT_USER", "MQTT_PASSWORD", "ROBOTEXEC_CLI_TEST_UNSET":
		default:
			env = append(env, kv)
		}
	}
	return env
}

// ---------------------------------------------------------------------
// Helpers: ports, configs, output

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
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
	_, err := time.Parse(time.RFC3339Nano, stamp)
	require.NoError(t, err, "time is RFC3339Nano: %s", payload)
	return b
}
