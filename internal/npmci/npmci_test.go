package npmci_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/npmci"
	"github.com/robotexec/robotexec/internal/testenv"
)

// A program whose one dependency is a package of its own directory, so
// that npm ci installs it without the registry.
const (
	programJSON = `{"name": "program", "version": "1.0.0", "dependencies": {"mod": "file:mod"}}`
	lockJSON    = `{
  "name": "program",
  "version": "1.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {"name": "program", "version": "1.0.0", "dependencies": {"mod": "file:mod"}},
    "mod": {"version": "1.0.0"},
    "node_modules/mod": {"resolved": "mod", "link": true}
  }
}`
)

// TestNode: a program without node_modules is installed with npm ci, and
// Node returns the node binary; asked again, it finds the module and
// installs nothing (node_modules is left as it was).
func TestNode(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "mod"), 0o755))
	for name, data := range map[string]string{
		"package.json":      programJSON,
		"package-lock.json": lockJSON,
		"mod/package.json":  `{"name": "mod", "version": "1.0.0"}`,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	node := npmci.Node(t, dir, "the test program", "mod")
	require.FileExists(t, node)
	st, err := os.Lstat(filepath.Join(dir, "node_modules", "mod"))
	require.NoError(t, err, "npm ci installed the module")

	require.Equal(t, node, npmci.Node(t, dir, "the test program", "mod"))
	again, err := os.Lstat(filepath.Join(dir, "node_modules", "mod"))
	require.NoError(t, err)
	require.Equal(t, st.ModTime(), again.ModTime(), "not installed again")
}

// fatal is a testing.TB whose Fatalf records the failure and ends the
// goroutine, as testing's does.
type fatal struct {
	testing.TB
	msg string
}

func (f *fatal) Helper() {}

func (f *fatal) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestNodeFails: where npm ci fails (a program without a lock file), the
// failure names the program, what failed and the command to run.
func TestNodeFails(t *testing.T) {
	// Skipped here, on the test's goroutine, where node or npm is missing:
	// the failure this test wants comes from npm ci.
	testenv.LookPath(t, testenv.Node)
	testenv.LookPath(t, testenv.NPM)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "package.json"), []byte(programJSON), 0o644))
	f := &fatal{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		npmci.Node(f, dir, "the test program", "mod")
	}()
	<-done
	require.Contains(t, f.msg, "the test program: npm ci failed")
	require.Contains(t, f.msg, "install it with: (cd "+dir+" && npm ci --no-audit --no-fund)")
}
