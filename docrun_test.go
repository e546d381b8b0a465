//go:build unix

package robotexec_test

// Running the documented commands: each block in /bin/sh, in a process
// group of its own so that a signal or a timeout reaches every process it
// started; one documentation test at a time on the machine, since the
// pages name fixed addresses (the demo's broker on 127.0.0.1:1883).

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtttest"
)

// Bounds of the documented commands.
const (
	docCommand  = 90 * time.Second // a foreground block, go run's build included
	docReady    = 90 * time.Second // a background command, until it is ready
	docStop     = 15 * time.Second // SIGINT until a background command exits
	docPortWait = 30 * time.Second // until the pages' fixed ports are free
	docLockWait = 4 * time.Minute  // another documentation test on the machine
)

// docPorts are the fixed addresses the pages' commands listen on.
var docPorts = []string{"127.0.0.1:1883", "127.0.0.1:9090", "127.0.0.1:8765", "127.0.0.1:8766", "127.0.0.1:18830"}

// docEnv is the environment of the commands: the test's, without the
// variables that would point them elsewhere, and PATH starting with an
// empty GOBIN (where the README's go install puts its binary) and the
// directory of the binary TestMain built.
func docEnv(t *testing.T) []string {
	gobin := t.TempDir()
	var env []string
	for _, kv := range testEnv() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "PATH", "GOBIN", "ROBOTEXEC_BROKER":
		default:
			env = append(env, kv)
		}
	}
	path := gobin + string(os.PathListSeparator) + filepath.Dir(robotexecBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	return append(env, "PATH="+path, "GOBIN="+gobin)
}

// withMosquitto returns env with the directory of the mosquitto broker
// on PATH, for a block that starts one. Without mosquitto the rest of the
// page is not run (the blocks after a page's mosquitto need it), as
// mqtttest.MissingMosquitto says.
func withMosquitto(t *testing.T, env []string) []string {
	t.Helper()
	path, ok := mqtttest.MosquittoPath()
	if !ok {
		mqtttest.MissingMosquitto(t)
	}
	out := slices.Clone(env)
	for i, kv := range out {
		if dirs, ok := strings.CutPrefix(kv, "PATH="); ok {
			out[i] = "PATH=" + dirs + string(os.PathListSeparator) + filepath.Dir(path)
		}
	}
	return out
}

// shellCmd is /bin/sh running script in the repository root, in a
// process group of its own.
func shellCmd(script string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command("/bin/sh", append(args, "-c", script)...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// runForeground runs a block with sh -e; it fails the test unless the
// block exits 0 within docCommand.
func runForeground(t *testing.T, b docBlock, env []string) {
	t.Helper()
	cmd := shellCmd(b.text, env, "-e")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: the block failed: %v\n--- block\n%s\n--- output\n%s", b, err, b.text, out.String())
		}
	case <-time.After(docCommand):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("%s: the block did not end within %v\n--- block\n%s\n--- output\n%s", b, docCommand, b.text, out.String())
	}
}

// assignmentsRE splits a command into its leading variable assignments
// and the rest.
var assignmentsRE = regexp.MustCompile(`^((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)(.*)$`)

// docProc is a background command.
type docProc struct {
	block  docBlock
	cmd    *exec.Cmd
	out    *lineLog
	exited chan struct{}
}

// startBackground starts a background block's command and waits until it
// prints the block's ready text.
func startBackground(t *testing.T, b docBlock, env []string) *docProc {
	t.Helper()
	// exec, after any variable assignments, makes the command itself the
	// process that SIGINT reaches, as in a terminal.
	m := assignmentsRE.FindStringSubmatch(b.commands()[0])
	p := &docProc{block: b, cmd: shellCmd(m[1]+"exec "+m[2], env), out: newLineLog(), exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	require.NoError(t, p.cmd.Start())
	go func() {
		_ = p.cmd.Wait() // the status is in ProcessState
		p.out.close()
		close(p.exited)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), docReady)
	defer cancel()
	if _, err := p.out.await(ctx, func(s string) bool { return strings.Contains(s, b.until) }); err != nil {
		p.kill()
		t.Fatalf("%s: waiting %v for %q: %v\n%s", b, docReady, b.until, err, p)
	}
	return p
}

func (p *docProc) String() string {
	return "$ " + p.block.commands()[0] + "\n" + strings.Join(p.out.all(), "\n")
}

// kill ends the command and everything it started, if it still runs.
func (p *docProc) kill() {
	select {
	case <-p.exited:
	default:
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

// stopAll sends SIGINT to the background commands, as Ctrl-C in their
// terminals, and checks that each ends cleanly within docStop: exit 0,
// or, for go run, the go command's 1 after an interrupt once robotexec
// logged that it stopped.
func stopAll(t *testing.T, procs []*docProc) {
	t.Helper()
	for _, p := range procs {
		require.NoError(t, syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT), "SIGINT to %s", p.block)
	}
	for _, p := range procs {
		select {
		case <-p.exited:
		case <-time.After(docStop):
			p.kill()
			t.Fatalf("%s: still running %v after SIGINT\n%s", p.block, docStop, p)
		}
		code := p.cmd.ProcessState.ExitCode()
		lines := p.out.all()
		goRun := strings.HasPrefix(p.block.commands()[0], "go run ")
		clean := code == 0 || goRun && code == 1 && len(lines) > 0 && strings.Contains(lines[len(lines)-1], "msg=stopped")
		if !clean {
			t.Fatalf("%s: exit %d after SIGINT\n%s", p.block, code, p)
		}
	}
}

// waitDocPortsFree waits until nothing listens on the pages' fixed
// addresses, so that the page's commands talk to what the page started.
func waitDocPortsFree(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(docPortWait)
	for _, addr := range docPorts {
		for {
			l, err := net.Listen("tcp", addr)
			if err == nil {
				require.NoError(t, l.Close())
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s is taken by another program; the documented commands listen on it: %v", addr, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// lockDocCommands holds, until the end of the test, a lock that one
// documentation test at a time takes on this machine (the tests of other
// checkouts included).
func lockDocCommands(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "robotexec-doc-commands.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() }) // closing releases the lock
	deadline := time.Now().Add(docLockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			t.Fatalf("lock %s: %v", f.Name(), err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
