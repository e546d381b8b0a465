package robotexec_test

// End-to-end tests of the command line: usage, usage errors, version and
// nodes.

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

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
	require.Regexp(t, `(?m)^imu_filter\s+low-pass filter for IMU samples$`, r.stdout, "the README's description of imu_filter")
	require.Len(t, lines(r.stdout), len(types), "one line per type:\n%s", r.stdout)
}
