package mqtttest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/robotexec/robotexec/internal/testenv"
)

// EjabberdHost is the XMPP host of the clusters that Ejabberd starts: the
// MQTT user names are user@EjabberdHost.
const EjabberdHost = "localhost"

// ejabberdWait bounds each wait for an ejabberd node or command: Erlang
// starts in seconds, more on a loaded machine.
const ejabberdWait = 60 * time.Second

// erlArgs returns the Erlang VM's arguments for a node named name (a
// hidden one for hidden), followed by more. The schedulers do not spin
// while they wait for work (+sbwt none, and its kin for the dirty
// schedulers): a spinning scheduler holds its CPU from the other nodes
// and from the other processes of a loaded machine. With three busy
// loops on two CPUs, a cluster took 55-62 s to start, and 7.6 s without
// the spinning.
func (c *EjabberdCluster) erlArgs(name string, hidden bool, more ...string) []string {
	args := []string{"-sname", name, "-setcookie", c.cookie, "-noinput",
		"+sbwt", "none", "+sbwtdcpu", "none", "+sbwtdio", "none",
		"-start_epmd", "false", "-kernel", "inet_dist_use_interface", "{127,0,0,1}"}
	if hidden {
		args = append(args, "-hidden")
	}
	return append(args, more...)
}

// EjabberdOptions configure a cluster started for a test. The zero value
// is two nodes with one user, "robot".
type EjabberdOptions struct {
	// Nodes is the number of nodes; 0 means 2.
	Nodes int
	// Users are the users registered, by name (without @EjabberdHost),
	// with their passwords; nil means {"robot": "robot-secret"}.
	Users map[string]string
}

// EjabberdCluster is a cluster of ejabberd nodes with mod_mqtt, from
// Debian's package, started for a test: each node has its own config,
// spool and log directory, its own Erlang node name and an MQTT listener
// on a free loopback port; the nodes share an Erlang cookie made for the
// cluster and an epmd of their own on a free loopback port, so that
// neither a system ejabberd nor another test's cluster can reach them.
type EjabberdCluster struct {
	t      TB
	bin    ejabberdBin
	dir    string
	id     string // makes the node names unique
	cookie string
	users  map[string]string
	epmd   *exec.Cmd
	epExit <-chan struct{}
	env    []string // of every Erlang process: the epmd, HOME
	nodes  []*EjabberdNode
}

// EjabberdNode is one node of an EjabberdCluster. It is a [Broker].
type EjabberdNode struct {
	c    *EjabberdCluster
	name string // the Erlang node name
	dir  string
	port int // MQTT

	mu   sync.Mutex
	cmd  *exec.Cmd
	exit <-chan struct{}
	log  *bytes.Buffer
}

// ejabberdBin is where Debian's package put Erlang and ejabberd, as its
// ejabberdctl names them.
type ejabberdBin struct{ erl, epmd, libs string }

// EjabberdPath returns Debian's ejabberdctl: on PATH, else in /usr/sbin
// (outside an ordinary user's PATH). ok is false when there is none.
func EjabberdPath() (path string, ok bool) {
	if p, err := exec.LookPath("ejabberdctl"); err == nil {
		return p, true
	}
	if fi, err := os.Stat("/usr/sbin/ejabberdctl"); err == nil && !fi.IsDir() {
		return "/usr/sbin/ejabberdctl", true
	}
	return "", false
}

// MissingEjabberd ends a test that needs ejabberd when there is none, as
// testenv.Missing does: it skips naming the install, or fails under
// ROBOTEXEC_TEST_ALL=1 (.ci/run installs it and sets that).
func MissingEjabberd(t TB) {
	t.Helper()
	testenv.Missing(t, testenv.Ejabberd, "PATH, /usr/sbin")
}

// Ejabberd starts a cluster of ejabberd nodes for the test, joined and
// with opts' users registered, and stops it when the test ends. Without
// ejabberd it ends the test as MissingEjabberd does. Starting takes
// seconds: tests share one cluster where they can.
func Ejabberd(t TB, opts EjabberdOptions) *EjabberdCluster {
	t.Helper()
	if _, ok := EjabberdPath(); !ok {
		MissingEjabberd(t)
		return nil
	}
	c, err := StartEjabberd(t.TempDir(), opts)
	if err != nil {
		t.Fatalf("mqtttest: %v", err)
		return nil
	}
	c.t = t
	t.Cleanup(c.Close)
	return c
}

// StartEjabberd starts a cluster as Ejabberd does, with its files in dir,
// for programs that are not tests (robotexec bench); the caller stops it
// with Close.
func StartEjabberd(dir string, opts EjabberdOptions) (*EjabberdCluster, error) {
	ctl, ok := EjabberdPath()
	if !ok {
		return nil, fmt.Errorf("ejabberd not found (PATH, /usr/sbin): install it with `%s`", testenv.Ejabberd.Install)
	}
	bin, err := readEjabberdctl(ctl)
	if err != nil {
		return nil, err
	}
	if opts.Nodes == 0 {
		opts.Nodes = 2
	}
	if opts.Users == nil {
		opts.Users = map[string]string{"robot": "robot-secret"}
	}
	c := &EjabberdCluster{bin: bin, dir: dir, id: randomHex(3), cookie: randomHex(16), users: opts.Users}
	if err := c.start(opts.Nodes); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// start starts the epmd and the nodes, joins them and registers the
// users.
func (c *EjabberdCluster) start(nodes int) error {
	if err := c.startEpmd(); err != nil {
		return err
	}
	for i := range nodes {
		n := &EjabberdNode{c: c, name: fmt.Sprintf("rx%s%c@%s", c.id, 'a'+i, EjabberdHost),
			dir: filepath.Join(c.dir, fmt.Sprintf("node%d", i+1)), log: new(bytes.Buffer)}
		if err := n.configure(); err != nil {
			return err
		}
		c.nodes = append(c.nodes, n)
	}
	errs := make(chan error, nodes)
	for _, n := range c.nodes {
		go func() { errs <- n.start() }()
	}
	var first error
	for range c.nodes {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return first
	}
	return c.joinAndRegister()
}

// startEpmd starts the cluster's own epmd on a free loopback port.
func (c *EjabberdCluster) startEpmd() error {
	var err error
	for range 5 {
		var port int
		if port, err = freePort(); err != nil {
			return err
		}
		c.env = append(os.Environ(), fmt.Sprintf("ERL_EPMD_PORT=%d", port), "HOME="+c.dir,
			"ERL_LIBS="+c.bin.libs, "ERL_CRASH_DUMP_BYTES=0")
		cmd := exec.Command(c.bin.epmd, "-port", fmt.Sprint(port), "-address", "127.0.0.1")
		cmd.Env = c.env
		exit, err := startKept(cmd)
		if err != nil {
			return fmt.Errorf("start epmd: %w", err)
		}
		if err = waitListening(fmt.Sprintf("127.0.0.1:%d", port), exit, 10*time.Second); err == nil {
			c.epmd, c.epExit = cmd, exit
			return nil
		}
		_ = cmd.Process.Kill()
		<-exit
	}
	return fmt.Errorf("start epmd: %w", err)
}

// waitListening waits until addr accepts connections, the process whose
// exit closes exit has exited, or timeout.
func waitListening(addr string, exit <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-exit:
			return fmt.Errorf("exited before listening on %s", addr)
		default:
		}
		if err := WaitDial(addr, 50*time.Millisecond); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after %v", addr, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// joinAndRegister joins every node to the first and registers the
// users, in one Erlang control node.
func (c *EjabberdCluster) joinAndRegister() error {
	var b strings.Builder
	first := c.nodes[0].name
	for _, n := range c.nodes[1:] {
		fmt.Fprintf(&b, "ok = rpc:call('%s', ejabberd_admin, join_cluster, [<<\"%s\">>]), ", n.name, first)
	}
	names := make([]string, 0, len(c.users))
	for u := range c.users {
		names = append(names, u)
	}
	sort.Strings(names)
	for _, u := range names {
		fmt.Fprintf(&b, "{ok, _} = rpc:call('%s', ejabberd_admin, register, [<<%q>>, <<%q>>, <<%q>>]), ",
			first, u, EjabberdHost, c.users[u])
	}
	if _, err := c.ctl(b.String() + "ok"); err != nil {
		return fmt.Errorf("ejabberd: join the cluster and register its users: %w", err)
	}
	return c.waitJoined()
}

// waitJoined waits until every running node sees every other running:
// until then a message may not cross from one to the other.
func (c *EjabberdCluster) waitJoined() error {
	var names []string
	for _, n := range c.nodes {
		if n.PID() != 0 {
			names = append(names, "'"+n.name+"'")
		}
	}
	list := "[" + strings.Join(names, ",") + "]"
	expr := fmt.Sprintf(`Want = lists:sort(%s),
		Joined = fun(N) -> case rpc:call(N, mnesia, system_info, [running_db_nodes]) of
		                       L when is_list(L) -> lists:sort(L) =:= Want; _ -> false end end,
		Wait = fun W(0) -> {error, [{N, rpc:call(N, mnesia, system_info, [running_db_nodes])} || N <- Want]};
		           W(K) -> case lists:all(Joined, Want) of true -> ok; false -> timer:sleep(100), W(K - 1) end end,
		ok = Wait(%d)`, list, int(ejabberdWait/(100*time.Millisecond)))
	if _, err := c.ctl(expr); err != nil {
		return fmt.Errorf("ejabberd: the nodes did not join: %w", err)
	}
	return nil
}

// ctl runs expr, Erlang expressions separated by commas, on a hidden
// control node of the cluster, and returns what it printed; a failed
// match is an error.
func (c *EjabberdCluster) ctl(expr string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ejabberdWait)
	defer cancel()
	name := fmt.Sprintf("rx%sctl%s@%s", c.id, randomHex(3), EjabberdHost)
	eval := fmt.Sprintf("try %s, halt(0) catch C:E -> io:format(\"~p:~p~n\", [C, E]), halt(1) end.", expr)
	cmd := exec.CommandContext(ctx, c.bin.erl, c.erlArgs(name, true, "-eval", eval)...)
	cmd.Env = c.env
	cmd.Dir = c.dir
	out, err := runKept(cmd)
	if err != nil {
		return string(out), fmt.Errorf("%v: %s", err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

// Close kills every node and the cluster's epmd.
func (c *EjabberdCluster) Close() {
	for _, n := range c.nodes {
		n.Kill()
	}
	if c.epmd != nil {
		_ = c.epmd.Process.Kill()
		<-c.epExit
		c.epmd = nil
	}
}

// Nodes returns the cluster's nodes, in the order they were made.
func (c *EjabberdCluster) Nodes() []*EjabberdNode { return c.nodes }

// URLs returns the MQTT URLs of the nodes, in order.
func (c *EjabberdCluster) URLs() []string {
	urls := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		urls[i] = n.URL()
	}
	return urls
}

// User returns the MQTT user name and password of the user name.
func (c *EjabberdCluster) User(name string) (username, password string) {
	return name + "@" + EjabberdHost, c.users[name]
}

// readEjabberdctl reads where ejabberdctl finds erl, epmd and ejabberd's
// libraries.
func readEjabberdctl(path string) (ejabberdBin, error) {
	f, err := os.Open(path)
	if err != nil {
		return ejabberdBin{}, fmt.Errorf("ejabberd: %w", err)
	}
	defer f.Close()
	b := ejabberdBin{erl: "/usr/bin/erl", epmd: "/usr/bin/epmd"}
	assign := regexp.MustCompile(`^\s*(ERL|EPMD|ERL_LIBS)=["']?([^"'\s]+)["']?\s*$`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := assign.FindStringSubmatch(sc.Text())
		switch {
		case m == nil:
		case m[1] == "ERL":
			b.erl = m[2]
		case m[1] == "EPMD":
			b.epmd = m[2]
		case m[1] == "ERL_LIBS":
			b.libs = m[2]
		}
	}
	if b.libs == "" {
		return b, fmt.Errorf("ejabberd: %s does not set ERL_LIBS: where are ejabberd's libraries?", path)
	}
	return b, sc.Err()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
