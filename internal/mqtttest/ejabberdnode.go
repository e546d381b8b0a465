package mqtttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

var _ Broker = (*EjabberdNode)(nil)

// ejabberdConfig is a node's ejabberd.yml: mod_mqtt on loopback, users
// with plain passwords in the cluster's database, and room for a burst of
// QoS 1 messages queued for an absent session.
const ejabberdConfig = `loglevel: warning
log_rotate_count: 0
hosts:
  - %[2]s
auth_method: [internal]
auth_password_format: plain
listen:
  -
    port: %[1]d
    ip: "127.0.0.1"
    module: mod_mqtt
    backlog: 1000
modules:
  mod_mqtt:
    max_queue: 100000
    use_cache: false
`

// configure picks the node's port and writes its config.
func (n *EjabberdNode) configure() error {
	port, err := freePort()
	if err != nil {
		return err
	}
	n.port = port
	for _, d := range []string{"spool", "logs"} {
		if err := os.MkdirAll(filepath.Join(n.dir, d), 0o755); err != nil {
			return fmt.Errorf("ejabberd: %w", err)
		}
	}
	files := map[string]string{
		"ejabberd.yml": fmt.Sprintf(ejabberdConfig, port, EjabberdHost),
		"inetrc":       fmt.Sprintf("{lookup,[\"file\",\"native\"]}.\n{host,{127,0,0,1}, [%q]}.\n", EjabberdHost),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(n.dir, name), []byte(body), 0o644); err != nil {
			return fmt.Errorf("ejabberd: %w", err)
		}
	}
	return nil
}

// start runs the node and waits until its MQTT listener accepts
// connections.
func (n *EjabberdNode) start() error {
	c := n.c
	cmd := exec.Command(c.bin.erl, c.erlArgs(n.name, false,
		"-mnesia", "dir", fmt.Sprintf("%q", filepath.Join(n.dir, "spool")), "-s", "ejabberd")...)
	cmd.Dir = n.dir
	cmd.Env = append(append([]string(nil), c.env...),
		"EJABBERD_CONFIG_PATH="+filepath.Join(n.dir, "ejabberd.yml"),
		"EJABBERD_LOG_PATH="+filepath.Join(n.dir, "logs", "ejabberd.log"),
		"ERL_INETRC="+filepath.Join(n.dir, "inetrc"))
	n.mu.Lock()
	cmd.Stdout = lockedWriter{mu: &n.mu, w: n.log}
	n.mu.Unlock()
	cmd.Stderr = cmd.Stdout
	exit, err := startKept(cmd)
	if err != nil {
		return fmt.Errorf("ejabberd: start %s: %w", n.name, err)
	}
	if err := waitListening(n.Addr(), exit, ejabberdWait); err != nil {
		_ = cmd.Process.Kill()
		<-exit
		return fmt.Errorf("ejabberd: node %s: %w: %s", n.name, err, n.Log())
	}
	n.mu.Lock()
	n.cmd, n.exit = cmd, exit
	n.mu.Unlock()
	return nil
}

// Name returns "ejabberd".
func (n *EjabberdNode) Name() string { return "ejabberd" }

// Node returns the node's Erlang name.
func (n *EjabberdNode) Node() string { return n.name }

// Addr returns the node's MQTT address.
func (n *EjabberdNode) Addr() string { return fmt.Sprintf("127.0.0.1:%d", n.port) }

// URL returns tcp://Addr().
func (n *EjabberdNode) URL() string { return "tcp://" + n.Addr() }

// PID returns the running node's process id, 0 when stopped.
func (n *EjabberdNode) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

// Log returns what the node wrote to its standard output and error over
// every run, and its log file.
func (n *EjabberdNode) Log() string {
	n.mu.Lock()
	out := n.log.String()
	n.mu.Unlock()
	file, _ := os.ReadFile(filepath.Join(n.dir, "logs", "ejabberd.log"))
	return out + string(file)
}

// Stop shuts the node down as `ejabberdctl stop` does (ejabberd's own
// shutdown: its sessions end, the other nodes carry on) and waits until
// it has exited; after 30 s it is killed.
func (n *EjabberdNode) Stop() {
	if n.PID() == 0 {
		return
	}
	// The answer may not come: the node stops.
	expr := fmt.Sprintf("_ = rpc:call('%s', ejabberd_admin, stop, [], 10000)", n.name)
	if _, err := n.c.ctl(expr); err != nil {
		n.logf("mqtttest: ejabberd: stop %s: %v; killing it", n.name, err)
		n.Kill()
		return
	}
	n.wait(30 * time.Second)
}

// Kill stops the node with SIGKILL, as a crash would: its connections
// end without a word.
func (n *EjabberdNode) Kill() {
	n.mu.Lock()
	cmd := n.cmd
	n.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		n.wait(10 * time.Second)
	}
}

// wait waits up to timeout for the node to exit, then kills it.
func (n *EjabberdNode) wait(timeout time.Duration) {
	n.mu.Lock()
	cmd, exit := n.cmd, n.exit
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-exit:
	case <-time.After(timeout):
		n.logf("mqtttest: ejabberd node %s (pid %d) still runs after %v; killing it", n.name, cmd.Process.Pid, timeout)
		_ = cmd.Process.Kill()
		<-exit
	}
	n.mu.Lock()
	n.cmd, n.exit = nil, nil
	n.mu.Unlock()
}

// Start starts a stopped node again, on the same port with the same
// spool, and waits until it is back in the cluster. It is for tests: it
// fails the test when it cannot.
func (n *EjabberdNode) Start() {
	if err := n.Restart(); err != nil {
		n.c.t.Fatalf("mqtttest: %v", err)
	}
}

// Restart is Start returning its error, for programs that are not tests.
func (n *EjabberdNode) Restart() error {
	if n.PID() != 0 {
		return nil
	}
	var err error
	deadline := time.Now().Add(5 * time.Second)
	for {
		// The port of the node's last run may linger a moment.
		if err = n.start(); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	return n.c.waitJoined()
}

func (n *EjabberdNode) logf(format string, args ...any) {
	if n.c.t != nil {
		n.c.t.Logf(format, args...)
	}
}
