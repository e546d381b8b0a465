package smallfile_test

import (
	"net"
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

// A Unix socket is named as such; a regular file that fails to read, as
// /proc/self/mem does at offset 0 (never mapped), fails Read with the
// read's error, not with a partial file.
func TestSocketAndReadError(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer ln.Close()
	require.ErrorContains(t, smallfile.Check(sock), "is not a regular file (a socket)")
	_, err = smallfile.Read(sock)
	require.ErrorContains(t, err, sock+": is not a regular file (a socket)")

	const mem = "/proc/self/mem"
	require.NoError(t, smallfile.Check(mem), "a regular file of size 0")
	data, err := smallfile.Read(mem)
	require.ErrorIs(t, err, syscall.EIO)
	require.Nil(t, data)
}
