package builtin_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/nodes/builtin"
)

// TestTypes: Types names every type the package registers, and only those.
func TestTypes(t *testing.T) {
	require.ElementsMatch(t, []string{"bridge", "heartbeat", "watchdog"}, builtin.Types())
	for _, typ := range builtin.Types() {
		_, ok := nodes.Lookup(typ)
		require.True(t, ok, typ)
	}
}
