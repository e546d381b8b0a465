// Package mcapjs gives tests the independent MCAP reader that checks
// robotexec's recordings: @mcap/core, the reference TypeScript library,
// under Node, installed with npm ci in its directory
// (internal/recording/testdata/mcapjs). A test that needs it installs it
// when it is missing, or fails naming the command to run: it is never
// skipped.
package mcapjs

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotexec/robotexec/internal/npmci"
)

// Node returns the node binary that runs the reader in dir, after
// installing the reader with npm ci when dir has no node_modules. Tests
// of several packages may ask at once: the install is under a file lock.
func Node(t testing.TB, dir string) string {
	t.Helper()
	return npmci.Node(t, dir, "the independent MCAP reader", "@mcap/core")
}

// Read runs the reader's script in dir on the MCAP file at path with
// node, and decodes the JSON it prints into v.
func Read(t testing.TB, node, dir, script, path string, v any) {
	t.Helper()
	cmd := exec.Command(node, filepath.Join(dir, script), path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", script, path, err, stderr.String())
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("%s %s: %v: %s", script, path, err, out)
	}
}
