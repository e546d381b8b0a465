package builtin_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/nodehooks"
	"github.com/robotexec/robotexec/nodes"
	_ "github.com/robotexec/robotexec/nodes/builtin"
)

// TestShortTypes: the built-in types are marked short (executor.procs);
// the registered types that are not built-in are not.
func TestShortTypes(t *testing.T) {
	for _, typ := range []string{"bridge", "heartbeat", "watchdog"} {
		_, ok := nodes.Lookup(typ)
		require.True(t, ok, typ)
		require.True(t, nodehooks.Short(typ), typ)
	}
	require.False(t, nodehooks.Short("stage"))
}
