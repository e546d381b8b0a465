package robotexec_test

// End-to-end tests of the robotexec command: TestMain builds the real
// binary from ./cmd/robotexec, and every test runs it as a user would,
// checking exit codes, stdout and stderr. The tests that run a config pick
// a free loopback port for its embedded broker and talk to it with the
// binary's own pub and echo commands.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/testenv"
)

// robotexecBin is the robotexec binary that TestMain builds.
var robotexecBin string

// Bounds of the waits: generous, so that a loaded machine does not fail the
// tests, yet short enough that a hang fails fast.
const (
	quickExit  = 10 * time.Second // a command that should end by itself
	startup    = 15 * time.Second // until "robotexec running"
	stopWithin = 5 * time.Second  // SIGINT/SIGTERM until exit: "a few seconds"
	traffic    = 15 * time.Second // until a message goes through
)

// TestMain builds the binary and runs the tests, twice as many parallel
// ones at once as there are processors (testenv.WidenParallel): they
// mostly wait for the processes and brokers they start.
func TestMain(m *testing.M) {
	testenv.WidenParallel()
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "robotexec-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cli_test:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	robotexecBin = filepath.Join(dir, "robotexec")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goTool(), "build", "-o", robotexecBin, "./cmd/robotexec").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cli_test: go build ./cmd/robotexec: %v\n%s", err, out)
		return 1
	}
	return testenv.Run(m)
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(os.Getenv("GOROOT"), "bin", "go")
}

// ---------------------------------------------------------------------
// Helpers: processes and their output

// lineLog collects the lines a process writes, for tests to wait on. It is
// the process's stdout or stderr: exec copies into it from its own
// goroutine.
type lineLog struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
	eof     bool
	changed chan struct{} // closed at each new line, and at EOF
}

func newLineLog() *lineLog { return &lineLog{changed: make(chan struct{})} }

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	added := false
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
		added = true
	}
	if added {
		close(l.changed)
		l.changed = make(chan struct{})
	}
	return len(p), nil
}

// close marks the end of the output, once the process has exited.
func (l *lineLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.partial) > 0 {
		l.lines = append(l.lines, string(l.partial))
		l.partial = nil
	}
	l.eof = true
	close(l.changed)
}

// all returns the lines so far.
func (l *lineLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// find returns the first line so far that match accepts.
func (l *lineLog) find(match func(string) bool) (string, bool) {
	for _, s := range l.all() {
		if match(s) {
			return s, true
		}
	}
	return "", false
}

// await waits until a line matches, the output ends or ctx ends.
func (l *lineLog) await(ctx context.Context, match func(string) bool) (string, error) {
	for {
		l.mu.Lock()
		lines, eof, changed := l.lines, l.eof, l.changed
		l.mu.Unlock()
		for _, s := range lines {
			if match(s) {
				return s, nil
			}
		}
		if eof {
			return "", errors.New("the output ended")
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// waitFor waits up to timeout for a line that holds substr and returns it.
func (l *lineLog) waitFor(t *testing.T, timeout time.Duration, substr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	line, err := l.await(ctx, func(s string) bool { return strings.Contains(s, substr) })
	if err != nil {
		t.Fatalf("waiting %v for a line with %q: %v; the lines:\n%s", timeout, substr, err, strings.Join(l.all(), "\n"))
	}
	return line
}

// proc is a running command.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr *lineLog
	exited         chan struct{} // closed when it has exited and its output is read
}

// startProc starts bin with args, in the environment of the test without
// the variables the configs use, plus env. The process is killed at the
// end of the test if it still runs.
func startProc(t *testing.T, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{
		cmd:    exec.Command(bin, args...),
		stdout: newLineLog(),
		stderr: newLineLog(),
		exited: make(chan struct{}),
	}
	p.cmd.Env = append(testEnv(), env...)
	p.cmd.Stdout = p.stdout
	p.cmd.Stderr = p.stderr
	p.cmd.WaitDelay = 5 * time.Second
	require.NoError(t, p.cmd.Start())
	go func() {
		_ = p.cmd.Wait() // the exit status is in cmd.ProcessState
		p.stdout.close()
		p.stderr.close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		if !p.hasExited() {
			_ = p.cmd.Process.Kill()
			select {
			case <-p.exited:
			case <-time.After(quickExit):
				t.Errorf("%s: still running after SIGKILL", p.name())
			}
		}
		if t.Failed() {
			t.Logf("%s:\n%s", p.name(), p)
		}
	})
	return p
}

func (p *proc) name() string { return strings.Join(p.cmd.Args, " ") }

// String returns the command line, stdout and stderr, for messages.
func (p *proc) String() string {
	return fmt.Sprintf("$ %s\n--- stdout\n%s\n--- stderr\n%s", p.name(),
		strings.Join(p.stdout.all(), "\n"), strings.Join(p.stderr.all(), "\n"))
}

func (p *proc) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

func (p *proc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(sig), "signal %v to %s", sig, p.name())
}

// wait waits up to timeout for the process to exit and returns its exit
// code.
func (p *proc) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		t.Fatalf("%s did not exit within %v\n%s", p.name(), timeout, p)
		return -1
	}
}

// result is what a command that ended printed, and its exit code.
type result struct {
	cmd            string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("$ %s\n--- exit %d\n--- stdout\n%s--- stderr\n%s", r.cmd, r.code, r.stdout, r.stderr)
}

// runCmd runs bin with args until it exits, at most timeout.
func runCmd(t *testing.T, timeout time.Duration, bin string, env []string, args ...string) result {
	t.Helper()
	p := startProc(t, bin, env, args...)
	code := p.wait(t, timeout)
	join := func(ls []string) string {
		if len(ls) == 0 {
			return ""
		}
		return strings.Join(ls, "\n") + "\n"
	}
	return result{cmd: p.name(), stdout: join(p.stdout.all()), stderr: join(p.stderr.all()), code: code}
}

// startRun starts robotexec run CONFIG and waits until it is running.
func startRun(t *testing.T, bin, config string, flags ...string) *proc {
	t.Helper()
	p := startProc(t, bin, nil, append(append([]string{"run"}, flags...), config)...)
	p.stderr.waitFor(t, startup, "robotexec running")
	return p
}

type pubMsg struct{ topic, payload string }

// publishUntil publishes msgs in turn with robotexec pub -qos 1, again and
// again, until done returns true; it fails the test if that takes longer
// than traffic. A subscriber's subscription is not visible from outside,
// so publishing again is how to be sure it gets a message.
func publishUntil(t *testing.T, url string, done func() bool, msgs ...pubMsg) {
	t.Helper()
	deadline := time.Now().Add(traffic)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		require.True(t, time.Now().Before(deadline), "no message went through within %v", traffic)
		for _, m := range msgs {
			r := runCmd(t, quickExit, robotexecBin, nil, "pub", "-broker", url, "-timeout", "5s", "-qos", "1", m.topic, m.payload)
			require.Equal(t, 0, r.code, "%s", r)
		}
		<-tick.C
	}
}

// testEnv is the test's environment without the variables that the
// configs expand.
func testEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "MQTT_USER", "MQTT_PASSWORD", "ROBOTEXEC_CLI_TEST_UNSET":
		default:
			env = append(env, kv)
		}
	}
	return env
}
