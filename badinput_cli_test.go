package robotexec_test

// End-to-end tests of bad input that validate catches before anything
// runs: files that are no config files, and bridges that would feed
// themselves.

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// badFileTimeout bounds validate on a bad file: it must not read it (a
// read of /dev/zero would never end); a start under -race on a loaded
// machine takes a second or more.
const badFileTimeout = 5 * time.Second

// TestValidateBadFiles: a device, a named pipe, or a config or TLS file over
// 1 MiB is an error naming the file (with its line in the config for a TLS
// file), exit 2, within a second; nothing is read from it.
func TestValidateBadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	big := filepath.Join(dir, "big.yaml")
	writeFile(t, big, "# padding\n"+strings.Repeat("#", 1<<20)+"\n")
	tlsConfig := func(name, ca string) string {
		path := filepath.Join(dir, name)
		writeFile(t, path, "mqtt:\n  broker: ssl://127.0.0.1:8883\n  tls:\n    ca: "+ca+"\n")
		return path
	}
	bigPEM := filepath.Join(dir, "big.pem")
	writeFile(t, bigPEM, strings.Repeat("x", 1<<20+1))
	for _, tc := range []struct {
		name, path, want string
	}{
		{"device", "/dev/zero", "/dev/zero: is not a regular file (a character device)"},
		{"named pipe", fifo, fifo + ": is not a regular file (a named pipe)"},
		{"over 1 MiB", big, big + ": is 1048587 bytes, over the limit of 1048576 (1 MiB)"},
		{"tls device", tlsConfig("dev.yaml", "/dev/zero"), "dev.yaml:4: mqtt.tls.ca: /dev/zero: is not a regular file (a character device)"},
		{"tls pipe", tlsConfig("pipe.yaml", fifo), "pipe.yaml:4: mqtt.tls.ca: " + fifo + ": is not a regular file (a named pipe)"},
		{"tls over 1 MiB", tlsConfig("bigpem.yaml", bigPEM), "bigpem.yaml:4: mqtt.tls.ca: " + bigPEM + ": is 1048577 bytes, over the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, cmd := range []string{"validate", "run"} {
				start := time.Now()
				r := runCmd(t, quickExit, robotexecBin, nil, cmd, tc.path)
				require.Less(t, time.Since(start), badFileTimeout, "%s", r)
				require.Equal(t, 2, r.code, "%s", r)
				require.Contains(t, r.stderr, tc.want, "%s", r)
			}
		})
	}
}

// TestValidateBridgeLoop: a bridge whose output can match its own input is
// an error naming the node, with its line.
func TestValidateBridgeLoop(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "loop.yaml")
	writeFile(t, path, "nodes:\n  - name: ok\n    type: bridge\n    params: { from: sensors/+/raw, to: robot/+/data }\n"+
		"  - name: echo_chamber\n    type: bridge\n    params: { from: robot/#, to: robot/in/# }\n")
	r := runCmd(t, quickExit, robotexecBin, nil, "validate", path)
	require.Equal(t, 2, r.code, "%s", r)
	require.Equal(t, path+`:5: nodes[1]: echo_chamber (bridge): to "robot/in/#" can match from "robot/#": the bridge would forward its own output, again and again`+"\n", r.stderr)
}
