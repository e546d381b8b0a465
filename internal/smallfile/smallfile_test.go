package smallfile_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/smallfile"
)

// Devices, named pipes, directories and files over the limit are errors at
// once; a small regular file reads whole.
func TestReadAndCheck(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	require.NoError(t, os.WriteFile(small, []byte("ok"), 0o644))
	big := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(big, make([]byte, smallfile.Limit+1), 0o644))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))

	data, err := smallfile.Read(small)
	require.NoError(t, err)
	require.Equal(t, "ok", string(data))
	require.NoError(t, smallfile.Check(small))

	for _, tc := range []struct{ path, want string }{
		{"/dev/zero", "not a regular file (a character device)"},
		{fifo, "not a regular file (a named pipe)"},
		{dir, "is a directory"},
		{big, "over the limit"},
		{filepath.Join(dir, "missing"), "no such file"},
	} {
		start := time.Now()
		require.ErrorContains(t, smallfile.Check(tc.path), tc.want)
		_, err := smallfile.Read(tc.path)
		require.ErrorContains(t, err, tc.want)
		require.Less(t, time.Since(start), time.Second)
	}
}
