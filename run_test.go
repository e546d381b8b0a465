package robotexec_test

// In-process tests of Run, the command line that Main runs: the commands
// that end by themselves, with their output and exit codes.

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec"
)

// run runs the command line args in process and returns its exit code,
// stdout and stderr.
func run(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := robotexec.Run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestRunInProcess: version prints the version; validate accepts a good
// config and rejects a bad one with its line; no command, or an unknown
// one, is a usage error.
func TestRunInProcess(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := run("version")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `^robotexec \S+\n$`, stdout)
	require.Empty(t, stderr)

	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte(`mqtt: { listen: "127.0.0.1:1883" }
nodes:
  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 1s } }
  - { name: relay, type: bridge, params: { from: sensors/+/raw, to: robot/+/data } }
`), 0o644))
	code, stdout, stderr = run("validate", good)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, good+": valid, 2 nodes\n", stdout)
	require.Empty(t, stderr)

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(`nodes:
  - name: beat
    type: heartbeat
    params: { topic: robot/heartbeat, period: fast }
`), 0o644))
	code, stdout, stderr = run("validate", bad)
	require.Equal(t, 2, code)
	require.Empty(t, stdout)
	require.Equal(t, bad+`:4: nodes[0].params.period: "fast" is not a duration`+"\n", stderr)

	code, stdout, stderr = run()
	require.Equal(t, 2, code)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "robotexec validate CONFIG")

	code, _, stderr = run("fly")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `robotexec: unknown command "fly"`)
}
