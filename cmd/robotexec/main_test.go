package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec"
)

// runMain runs main with args, its stdout and stderr in files, and returns
// the exit status and what it wrote.
func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	outFile, err := os.Create(filepath.Join(dir, "stdout"))
	require.NoError(t, err)
	defer outFile.Close()
	errFile, err := os.Create(filepath.Join(dir, "stderr"))
	require.NoError(t, err)
	defer errFile.Close()

	oldArgs, oldOut, oldErr, oldExit := os.Args, os.Stdout, os.Stderr, exit
	defer func() { os.Args, os.Stdout, os.Stderr, exit = oldArgs, oldOut, oldErr, oldExit }()
	os.Args, os.Stdout, os.Stderr = append([]string{"robotexec"}, args...), outFile, errFile
	code = -1
	exit = func(c int) { code = c }
	main()

	out, err := os.ReadFile(outFile.Name())
	require.NoError(t, err)
	errOut, err := os.ReadFile(errFile.Name())
	require.NoError(t, err)
	return code, string(out), string(errOut)
}

func TestMainVersion(t *testing.T) {
	old := robotexec.Version
	defer func() { robotexec.Version = old }()
	robotexec.Version = "v1.2.3-test"
	code, stdout, stderr := runMain(t, "version")
	require.Equal(t, 0, code)
	require.Equal(t, "robotexec v1.2.3-test\n", stdout)
	require.Empty(t, stderr)
}

// The stock binary has the built-in node types and the example ones, so
// that examples/config.yaml and examples/pipeline.yaml run as they are.
func TestMainHasTheExampleNodeTypes(t *testing.T) {
	code, stdout, stderr := runMain(t, "nodes")
	require.Equal(t, 0, code, stderr)
	for _, typ := range []string{"bridge", "heartbeat", "watchdog", "imu_filter", "sim_imu", "sim_odom", "stage", "sink"} {
		require.Contains(t, stdout, typ)
	}
	for _, cfg := range []string{"../../examples/config.yaml", "../../examples/pipeline.yaml"} {
		code, _, stderr := runMain(t, "validate", cfg)
		require.Equal(t, 0, code, stderr)
	}
}

func TestMainUsageError(t *testing.T) {
	code, stdout, stderr := runMain(t, "fly")
	require.Equal(t, 2, code)
	require.Empty(t, stdout)
	require.True(t, strings.HasPrefix(stderr, `robotexec: unknown command "fly"`), stderr)
}
