// Package npmci gives tests the Node programs kept in their testdata, each
// a directory with a package.json and a package-lock.json of exact
// versions: a test that needs one installs it with npm ci when it is
// missing, or fails naming the command to run. Without node (or npm, when
// it must install) the test ends as testenv.Missing says: skipped, or
// failed under ROBOTEXEC_TEST_ALL=1.
package npmci

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/robotexec/robotexec/internal/testenv"
)

// Node returns the node binary that runs the program in dir, after
// installing its packages with npm ci when dir has no node_modules/module.
// what names the program in failures. Tests of several packages may ask
// at once: the install is under a file lock.
func Node(t testing.TB, dir, what, module string) string {
	t.Helper()
	fail := func(why string, err error) {
		t.Helper()
		t.Fatalf("%s: %s: %v; install it with: (cd %s && npm ci --no-audit --no-fund), with Node 18 or later", what, why, err, dir)
	}
	node := testenv.LookPath(t, testenv.Node)
	if installed(dir, module) {
		return node
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		fail("lock", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		fail("lock", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closed next
	if installed(dir, module) {
		return node // by another package's test meanwhile
	}
	testenv.LookPath(t, testenv.NPM)
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		fail("npm ci failed:\n"+string(out), err)
	}
	if !installed(dir, module) {
		fail("npm ci installed no "+module, os.ErrNotExist)
	}
	return node
}

func installed(dir, module string) bool {
	_, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(module)))
	return err == nil
}
