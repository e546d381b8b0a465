package robotexec_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/cli"
)

// TestExitCodes: the exit codes the root package documents are the ones
// the command returns.
func TestExitCodes(t *testing.T) {
	require.Equal(t, []int{0, 1, 2}, []int{cli.ExitOK, cli.ExitFailure, cli.ExitUsage}, "docs/cli.md's exit codes")
}
