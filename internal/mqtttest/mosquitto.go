package mqtttest

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/robotexec/robotexec/internal/testenv"
)

var discard = slog.New(slog.DiscardHandler)

// MosquittoEnv names the environment variable that points at the mosquitto
// binary when it is neither on PATH nor in /usr/sbin.
const MosquittoEnv = "ROBOTEXEC_MOSQUITTO"

// MosquittoPath returns the mosquitto binary: $ROBOTEXEC_MOSQUITTO, else
// mosquitto on PATH, else /usr/sbin/mosquitto (Debian installs it there,
// outside an ordinary user's PATH). ok is false when there is none.
func MosquittoPath() (path string, ok bool) {
	if p := os.Getenv(MosquittoEnv); p != "" {
		return p, true
	}
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p, true
	}
	if fi, err := os.Stat("/usr/sbin/mosquitto"); err == nil && !fi.IsDir() {
		return "/usr/sbin/mosquitto", true
	}
	return "", false
}

// MissingMosquitto ends a test that needs mosquitto when there is none, as
// testenv.Missing does: it skips naming the command that installs it, or
// fails under ROBOTEXEC_TEST_ALL=1 (.ci/run installs it and sets that).
func MissingMosquitto(t TB) {
	t.Helper()
	testenv.Missing(t, testenv.Mosquitto, "PATH, /usr/sbin, $"+MosquittoEnv)
}

// MosquittoOptions configure a mosquitto started by a test. The zero value
// is an anonymous broker without persistence.
type MosquittoOptions struct {
	// Users, when not empty, are the only users allowed to connect; the
	// password file is made with mosquitto_passwd.
	Users map[string]string
	// Persistence keeps sessions and queued messages in a file in the
	// test's temporary directory, so that they survive Stop and Start.
	Persistence bool
	// MaxQueued is max_queued_messages; 0 means 100000 (mosquitto's
	// default of 1000 drops QoS 1 messages in a burst).
	MaxQueued int
	// Extra lines are appended to the config file.
	Extra []string
}

// MosquittoBroker is a mosquitto process started for a test.
type MosquittoBroker struct {
	t    TB
	path string
	dir  string
	conf string
	port int

	mu   sync.Mutex
	cmd  *exec.Cmd
	exit <-chan struct{} // closed when cmd has exited
	log  *bytes.Buffer   // stderr of every run, shared by the runs
}

// Mosquitto starts mosquitto on a free loopback port with its own config
// file and stops it when the test ends. Without a mosquitto binary it ends
// the test as MissingMosquitto does.
func Mosquitto(t TB, opts MosquittoOptions) *MosquittoBroker {
	t.Helper()
	if _, ok := MosquittoPath(); !ok {
		MissingMosquitto(t)
		return nil
	}
	m, err := StartMosquitto(t.TempDir(), opts)
	if err != nil {
		t.Fatalf("mqtttest: %v", err)
		return nil
	}
	m.t = t
	t.Cleanup(m.Stop)
	return m
}

// StartMosquitto starts mosquitto as Mosquitto does, with its config and
// files in dir, for programs that are not tests (robotexec bench); the
// caller stops it with Stop. It fails when there is no mosquitto binary
// (see MosquittoPath) or it does not start.
func StartMosquitto(dir string, opts MosquittoOptions) (*MosquittoBroker, error) {
	path, ok := MosquittoPath()
	if !ok {
		return nil, fmt.Errorf("mosquitto not found (PATH, /usr/sbin, $%s)", MosquittoEnv)
	}
	m := &MosquittoBroker{path: path, dir: dir, log: new(bytes.Buffer)}
	lines, err := m.confLines(opts)
	if err != nil {
		return nil, err
	}
	for attempt := 0; attempt < 5; attempt++ {
		if m.port, err = freePort(); err != nil {
			return nil, err
		}
		if err := m.writeConf(lines); err != nil {
			return nil, err
		}
		if err = m.start(); err == nil {
			return m, nil
		}
		if !strings.Contains(err.Error(), "in use") {
			break
		}
	}
	return nil, fmt.Errorf("start mosquitto: %w", err)
}

// confLines returns the config file's lines but the listener.
func (m *MosquittoBroker) confLines(opts MosquittoOptions) ([]string, error) {
	var lines []string
	if len(opts.Users) > 0 {
		pw := filepath.Join(m.dir, "passwd")
		names := make([]string, 0, len(opts.Users))
		for u := range opts.Users {
			names = append(names, u)
		}
		sort.Strings(names)
		for i, u := range names {
			args := []string{"-b", pw, u, opts.Users[u]}
			if i == 0 {
				args = append([]string{"-c"}, args...)
			}
			if out, err := exec.Command(passwdPath(), args...).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("mosquitto_passwd: %v: %s", err, out)
			}
		}
		lines = append(lines, "allow_anonymous false", "password_file "+pw)
	} else {
		lines = append(lines, "allow_anonymous true")
	}
	if opts.Persistence {
		lines = append(lines, "persistence true", "persistence_location "+m.dir+string(filepath.Separator))
	} else {
		lines = append(lines, "persistence false")
	}
	if opts.MaxQueued == 0 {
		opts.MaxQueued = 100000
	}
	lines = append(lines,
		fmt.Sprintf("max_queued_messages %d", opts.MaxQueued),
		"set_tcp_nodelay true",
		"log_dest stderr",
		"log_type error",
		"log_type warning",
		"log_type notice",
		"log_type information",
	)
	if os.Geteuid() == 0 {
		// Started as root, mosquitto drops to user mosquitto, which may
		// not read the password file nor write the temporary directory.
		lines = append(lines, "user root")
	}
	return append(lines, opts.Extra...), nil
}

func (m *MosquittoBroker) writeConf(lines []string) error {
	m.conf = filepath.Join(m.dir, "mosquitto.conf")
	body := fmt.Sprintf("listener %d 127.0.0.1\n%s\n", m.port, strings.Join(lines, "\n"))
	if err := os.WriteFile(m.conf, []byte(body), 0o644); err != nil {
		return fmt.Errorf("write mosquitto config: %w", err)
	}
	return nil
}

// Name returns "mosquitto".
func (m *MosquittoBroker) Name() string { return "mosquitto" }

// Addr returns the broker's address.
func (m *MosquittoBroker) Addr() string { return fmt.Sprintf("127.0.0.1:%d", m.port) }

// URL returns tcp://Addr().
func (m *MosquittoBroker) URL() string { return "tcp://" + m.Addr() }

// PID returns the running process's id, 0 when stopped.
func (m *MosquittoBroker) PID() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil {
		return 0
	}
	return m.cmd.Process.Pid
}

// Log returns what mosquitto wrote to stderr so far, over every run.
func (m *MosquittoBroker) Log() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.log.String()
}

// start runs mosquitto and waits until it accepts connections.
func (m *MosquittoBroker) start() error {
	cmd := exec.Command(m.path, "-c", m.conf)
	m.mu.Lock()
	cmd.Stderr = lockedWriter{mu: &m.mu, w: m.log}
	m.mu.Unlock()
	cmd.Stdout = cmd.Stderr
	exit, err := startKept(cmd)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exit:
			return fmt.Errorf("mosquitto exited at start (%s): %s", cmd.ProcessState, m.Log())
		default:
		}
		if err := WaitDial(m.Addr(), 50*time.Millisecond); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exit
			return fmt.Errorf("mosquitto does not accept connections on %s after 10s: %s", m.Addr(), m.Log())
		}
	}
	m.mu.Lock()
	m.cmd, m.exit = cmd, exit
	m.mu.Unlock()
	return nil
}

// Stop sends SIGTERM to mosquitto and waits for it to exit; with
// persistence on, it saves its sessions first. After 10 s it is killed.
func (m *MosquittoBroker) Stop() { m.signal(syscall.SIGTERM) }

// Kill stops mosquitto with SIGKILL: nothing is saved.
func (m *MosquittoBroker) Kill() { m.signal(syscall.SIGKILL) }

// Pause stops mosquitto with SIGSTOP: its connections stay open, and
// nothing is read or answered until Continue.
func (m *MosquittoBroker) Pause() { m.send(syscall.SIGSTOP) }

// Continue resumes mosquitto after Pause.
func (m *MosquittoBroker) Continue() { m.send(syscall.SIGCONT) }

func (m *MosquittoBroker) send(sig syscall.Signal) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil {
		_ = m.cmd.Process.Signal(sig)
	}
}

func (m *MosquittoBroker) signal(sig syscall.Signal) {
	m.mu.Lock()
	cmd, exit := m.cmd, m.exit
	m.cmd, m.exit = nil, nil
	m.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-exit:
	case <-time.After(10 * time.Second):
		if m.t != nil {
			m.t.Logf("mqtttest: mosquitto (pid %d) ignored %v for 10s; killing it", cmd.Process.Pid, sig)
		}
		_ = cmd.Process.Kill()
		<-exit
	}
}

// Start starts mosquitto again on the same port, with the same config
// (and persistence file). It is for tests: it fails the test when it
// cannot.
func (m *MosquittoBroker) Start() {
	m.t.Helper()
	m.mu.Lock()
	running := m.cmd != nil
	m.mu.Unlock()
	if running {
		return
	}
	var err error
	deadline := time.Now().Add(5 * time.Second)
	for {
		err = m.start()
		if err == nil || !strings.Contains(err.Error(), "in use") || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		m.t.Fatalf("mqtttest: restart mosquitto on port %d: %v", m.port, err)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// passwdPath returns mosquitto_passwd, which Debian installs in /usr/bin
// beside mosquitto_pub.
func passwdPath() string {
	if p, err := exec.LookPath("mosquitto_passwd"); err == nil {
		return p
	}
	return "/usr/bin/mosquitto_passwd"
}
