// Package mcapjs gives tests the independent MCAP reader that checks
// robotexec's recordings: @mcap/core, the reference TypeScript library,
// under Node, installed with npm ci in its directory
// (internal/recording/testdata/mcapjs). A test that needs it installs it
// when it is missing, or fails naming the command to run: it is never
// skipped.
package mcapjs

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// Node returns the node binary that runs the reader in dir, after
// installing the reader with npm ci when dir has no node_modules. Tests
// of several packages may ask at once: the install is under a file lock.
func Node(t testing.TB, dir string) string {
	t.Helper()
	fail := func(what string, err error) {
		t.Helper()
		t.Fatalf("the independent MCAP reader: %s: %v; install it with: (cd %s && npm ci --no-audit --no-fund), with Node 18 or later", what, err, dir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		fail("no node", err)
	}
	if installed(dir) {
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
	if installed(dir) {
		return node // by another package's test meanwhile
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		fail("npm ci failed:\n"+string(out), err)
	}
	if !installed(dir) {
		fail("npm ci installed no @mcap/core", os.ErrNotExist)
	}
	return node
}

func installed(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "node_modules", "@mcap", "core"))
	return err == nil
}
