package config_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/smallfile"
)

// FuzzConfigFiles gives config.Load arbitrary strings as the path of the
// config file and as the mqtt.tls ca, cert and key paths. Load must never
// panic, never read more than 1 MiB (measured with the process's count of
// bytes read, rchar in /proc/self/io, where there is one), and fail with
// an error that names the file when it is not a regular file (a device
// such as /dev/zero, a FIFO, a socket, a directory).
//
// The config path is confined to a sandbox directory, but for paths under
// /dev/: Load reads the file, and some files block their readers forever
// (/proc/kmsg). The sandbox holds the files of interest: a FIFO, a
// socket, a directory, links to /dev/zero and /dev/null, a link loop, a
// file of exactly 1 MiB and one a byte over. The TLS paths are not
// confined: Load only looks at those files (stat); relative ones are
// resolved against the config's directory, the sandbox. No input leaves
// anything there: each fails or passes alone as in a run.
func FuzzConfigFiles(f *testing.F) {
	dir := sandbox(f)
	for _, s := range [][4]string{
		{"config.yaml", "ca.pem", "cert.pem", "key.pem"},
		{"/dev/zero", "/dev/zero", "fifo", "dir"},
		{"fifo", "zero", "null", "sock"},
		{"sock", "dir/", "/dev/null", "/dev/stdin"},
		{"big.yaml", "big.yaml", "max.yaml", ""},
		{"max.yaml", "missing", "loop", "/proc/kmsg"},
		{"dir", "${HOME}/x", "$$", "${UNSET_FUZZ_VAR:-fifo}"},
		{"", "", "", ""},
		{"../../etc/passwd", "/etc/passwd", "\x00", "\xff\xfe"},
		{"loop", "a\nb", `"quoted"`, "ca.pem\" , key: \"fifo"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	tlsConfig := filepath.Join(dir, "tls.yaml")
	f.Fuzz(func(t *testing.T, path, ca, cert, key string) {
		load(t, confine(dir, path))

		body := fmt.Sprintf("mqtt:\n  broker: ssl://broker:8883\n  tls: {ca: %s, cert: %s, key: %s}\n",
			strconv.Quote(ca), strconv.Quote(cert), strconv.Quote(key))
		if err := os.WriteFile(tlsConfig, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		// Gone before the next input, whose config path may name it.
		t.Cleanup(func() { _ = os.Remove(tlsConfig) })
		cfg, err := load(t, tlsConfig)
		if cfg == nil || cfg.MQTT.TLS == nil {
			return // the YAML did not parse (a NUL, say)
		}
		for _, file := range []struct{ key, path string }{
			{"ca", cfg.MQTT.TLS.CA}, {"cert", cfg.MQTT.TLS.Cert}, {"key", cfg.MQTT.TLS.Key},
		} {
			if file.path == "" || !irregular(file.path) {
				continue
			}
			if err == nil || !strings.Contains(err.Error(), "mqtt.tls."+file.key+": "+file.path+": ") {
				t.Fatalf("tls %s %q is not a regular file; the error does not name it: %v", file.key, file.path, err)
			}
		}
	})
}

// load calls config.Load(path) and checks what it read and, when path is
// not a regular file, that it failed naming it.
func load(t *testing.T, path string) (*config.Config, error) {
	t.Helper()
	before, counted := bytesRead(t)
	cfg, err := config.Load(path)
	if after, _ := bytesRead(t); counted && after-before > smallfile.Limit+64<<10 {
		t.Fatalf("Load(%q) read %d bytes", path, after-before)
	}
	if irregular(path) && (cfg != nil || err == nil || !strings.HasPrefix(err.Error(), path+": ")) {
		t.Fatalf("Load(%q), not a regular file: config %v, error %v", path, cfg != nil, err)
	}
	return cfg, err
}

// irregular reports whether path names an existing file that is not a
// regular file.
func irregular(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.Mode().IsRegular()
}

// bytesRead returns rchar of /proc/self/io: the bytes the process's read
// system calls returned so far. ok is false without it.
func bytesRead(t *testing.T) (n int64, ok bool) {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, found := strings.CutPrefix(sc.Text(), "rchar: "); found {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("/proc/self/io: %v", err)
			}
			return n, true
		}
	}
	return 0, false
}

// confine maps s to a path in dir, or under /dev/.
func confine(dir, s string) string {
	if clean := filepath.Clean(s); strings.HasPrefix(clean, "/dev/") {
		return clean
	}
	return filepath.Join(dir, filepath.Clean("/"+s))
}

// sandbox makes the sandbox of FuzzConfigFiles.
func sandbox(f *testing.F) string {
	dir := f.TempDir()
	files := map[string][]byte{
		"config.yaml": []byte("executor: {workers: 1}\n"),
		"ca.pem":      []byte("ca"), "cert.pem": []byte("cert"), "key.pem": []byte("key"),
		"big.yaml": bytes.Repeat([]byte("#"), smallfile.Limit+1),
		"max.yaml": append(bytes.Repeat([]byte("#"), smallfile.Limit-1), '\n'),
	}
	for name, data := range files {
		must(f, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	must(f, os.Mkdir(filepath.Join(dir, "dir"), 0o755))
	must(f, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	must(f, os.Symlink("/dev/zero", filepath.Join(dir, "zero")))
	must(f, os.Symlink("/dev/null", filepath.Join(dir, "null")))
	must(f, os.Symlink("loop", filepath.Join(dir, "loop")))
	ln, err := net.Listen("unix", filepath.Join(dir, "sock"))
	must(f, err)
	f.Cleanup(func() { _ = ln.Close() })
	return dir
}

func must(f *testing.F, err error) {
	f.Helper()
	if err != nil {
		f.Fatal(err)
	}
}
