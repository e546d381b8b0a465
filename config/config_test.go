package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/config"
)

// Load and Parse read a config and report each problem with its file and
// line.
func TestLoadAndErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "robot.yaml")
	require.NoError(t, os.WriteFile(path, []byte("nodes:\n  - { name: beat, type: heartbeat, params: { topic: t, period: 1s } }\n"), 0o644))
	cfg, err := config.Load(path)
	require.NoError(t, err)
	require.Equal(t, path, cfg.File())

	_, err = config.Parse("bad.yaml", []byte("executor:\n  workers: -1\n  queue_depth: 0\n"))
	errs := config.Errors(err)
	require.Len(t, errs, 2)
	require.EqualError(t, errs[0], "bad.yaml:2: executor.workers: must be 0 (one per CPU) or more, not -1")
	require.EqualError(t, errs[1], "bad.yaml:3: executor.queue_depth: must be 1 or more, not 0")
	require.Empty(t, config.Errors(os.ErrNotExist))
}
