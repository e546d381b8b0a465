// Package mcapjs gives tests the independent MCAP reader that checks
// robotexec's recordings: @mcap/core, the reference TypeScript library,
// under Node, installed with npm ci in its directory
// (internal/recording/testdata/mcapjs). A test that needs it installs it
// when it is missing, or fails naming the command to run: it is never
// skipped.
package mcapjs

import (
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
