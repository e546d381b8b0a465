package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/robotexec/robotexec/internal/gcpace"
)

// The idle group: the CPU that a `robotexec run` process spends with
// nothing to do but its timers, 1,000 bridge nodes whose topics stay
// silent and 100 heartbeat nodes at 1 Hz on its embedded broker, beside a
// raw paho client process that holds as many subscriptions and tickers on
// an embedded broker of its own.

var specIdle = Spec{Name: "idle cpu (% of a core)", Unit: "% of a core", BaselineName: "raw paho client", Target: &Target{Of: "value", Op: "<=", Bound: 0.36}}

const (
	// IdleBridges is the number of the idle workload's bridge nodes (the
	// raw client's subscriptions).
	IdleBridges = 1000
	// IdleBeats is the number of its heartbeat nodes at 1 Hz (the raw
	// client's tickers).
	IdleBeats = 100

	// idleWindow is the longest window over which a process's CPU is
	// measured, idleMinWindow the shortest, whatever the budget.
	idleWindow    = 10 * time.Second
	idleMinWindow = 2 * time.Second
	// idleSettle is how long the processes run before the first window:
	// past their start's work and their heartbeats' first period. The
	// start's work ends with the GC pacer's calm (gcpace.Quiet after the
	// start's last collection: a collection and the release of the free
	// memory to the OS, about 8 ms of CPU once), which a settle of 1.5 s
	// left in the first window: 0.5-0.6% of a core in its 2 s, against
	// 0.07-0.13% in the windows after it.
	idleSettle = gcpace.Quiet + time.Second
	// idleStart bounds how long a process may take to start.
	idleStart = time.Minute
	// idleRunning is what `robotexec run` logs once every node runs.
	idleRunning = `msg="robotexec running"`
)

// idle measures the CPU of an idle robotexec run process beside the raw
// client's, or says why it could not.
func (s *suite) idle() ([]Metric, error) {
	if s.cfg.Executable == "" {
		return []Metric{NotMeasured(specIdle, ErrNoExecutable.Error())}, nil
	}
	window, n := s.idleWindows()
	dir, err := os.MkdirTemp("", "robotexec-bench-idle-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "idle.yaml")
	if err := os.WriteFile(path, idleConfig(s.cfg.Workers, IdleBridges, IdleBeats), 0o600); err != nil {
		return nil, err
	}
	cmd, err := s.robotexec("run", path)
	if err != nil {
		return nil, err
	}
	run, err := s.startIdle(cmd, "robotexec run", idleRunning)
	if err != nil {
		return nil, err
	}
	defer run.stop()
	if cmd, err = s.child(idleRawRole, strconv.Itoa(IdleBridges), strconv.Itoa(IdleBeats)); err != nil {
		return nil, err
	}
	raw, err := s.startIdle(cmd, "the raw client", idleReady)
	if err != nil {
		return nil, err
	}
	defer raw.stop()
	values, baselines, err := s.idleWindowsOf(run, raw, window, n)
	if err != nil {
		return nil, err
	}
	m := NewMetric(specIdle, values, baselines)
	m.Note = fmt.Sprintf("`robotexec run` of a config with %d bridge nodes (each its own silent topic) and %d heartbeat nodes at 1 Hz on its embedded broker (mqtt.qos 1, %d workers) vs a raw paho.golang MQTT 5 client process with %d subscriptions and %d Go tickers at 1 Hz, each publishing a heartbeat's JSON at QoS 1, on an embedded broker of its own in the same process: each side holds one broker and one client, as a robot's only process would. The two processes run side by side, each measured over the same %d window(s) of %v after %v of settling (the process's CPU, user and system, from its threads' /proc schedstat): the same load from the rest of the machine for both. robotexec's heartbeats that no client wants stay in the process; the raw client's go to its broker.",
		IdleBridges, IdleBeats, s.cfg.Workers, IdleBridges, IdleBeats, n, window, idleSettle)
	return []Metric{m}, nil
}

// idleWindows returns the length and the number of the measurement
// windows: the group's share of the budget, split in up to cfg.Repeat
// windows of idleMinWindow to idleWindow each.
func (s *suite) idleWindows() (time.Duration, int) {
	share := s.cfg.slice("idle") * time.Duration(2*s.cfg.Repeat)
	window := min(max(share/time.Duration(s.cfg.Repeat), idleMinWindow), idleWindow)
	return window, min(max(int(share/window), 1), s.cfg.Repeat)
}

// idleConfig returns the robotexec config of the idle workload: workers
// workers, the embedded broker on a free loopback port, bridges bridge
// nodes and beats heartbeat nodes at 1 Hz, and the other defaults.
func idleConfig(workers, bridges, beats int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "executor: { workers: %d }\nmqtt: { broker: embedded, listen: '127.0.0.1:0' }\nnodes:\n", workers)
	for i := range bridges {
		fmt.Fprintf(&b, "  - { name: bridge%d, type: bridge, params: { from: idle/in/%d, to: idle/out/%d } }\n", i, i, i)
	}
	for i := range beats {
		fmt.Fprintf(&b, "  - { name: beat%d, type: heartbeat, params: { topic: idle/beat/%d, period: 1s } }\n", i, i)
	}
	return b.Bytes()
}

// idleWindowsOf measures n windows of the processes' CPU, side by side,
// in percent of a core.
func (s *suite) idleWindowsOf(run, raw *idleProc, window time.Duration, n int) (values, baselines []float64, err error) {
	if err := s.idlePause(idleSettle); err != nil {
		return nil, nil, err
	}
	for range n {
		a0, err1 := readThreadsCPU(run.pid())
		b0, err2 := readThreadsCPU(raw.pid())
		start := time.Now()
		if err := errors.Join(err1, err2, s.idlePause(window)); err != nil {
			return nil, nil, err
		}
		a1, err1 := readThreadsCPU(run.pid())
		b1, err2 := readThreadsCPU(raw.pid())
		elapsed := time.Since(start)
		if err := errors.Join(err1, err2, run.alive(), raw.alive()); err != nil {
			return nil, nil, err
		}
		values = append(values, 100*a0.to(a1).Seconds()/elapsed.Seconds())
		baselines = append(baselines, 100*b0.to(b1).Seconds()/elapsed.Seconds())
	}
	return values, baselines, nil
}

// idlePause waits for d, or until the suite's context ends.
func (s *suite) idlePause(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

// idleProc is a process of the idle group.
type idleProc struct {
	cmd    *exec.Cmd
	what   string
	out    *idleMarker
	exited chan struct{} // closed once Wait returned
	err    error         // Wait's, once exited is closed
}

// startIdle starts cmd, the process what, and waits until its output
// holds mark; on an error it has stopped the process.
func (s *suite) startIdle(cmd *exec.Cmd, what, mark string) (*idleProc, error) {
	p := &idleProc{cmd: cmd, what: what, out: newIdleMarker(mark), exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	deadline := time.NewTimer(idleStart)
	defer deadline.Stop()
	var err error
	select {
	case <-p.out.seen:
		return p, nil
	case <-p.exited:
		err = p.alive()
	case <-deadline.C:
		err = fmt.Errorf("bench: idle: %s did not start within %v: %s", p.what, idleStart, p.out.head())
	case <-s.ctx.Done():
		err = s.ctx.Err()
	}
	p.stop()
	return nil, err
}

func (p *idleProc) pid() int { return p.cmd.Process.Pid }

// alive returns an error that says how the process ended, or nil while it
// runs.
func (p *idleProc) alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("bench: idle: %s exited (%v): %s", p.what, p.err, p.out.head())
	default:
		return nil
	}
}

// stop interrupts the process and waits for it.
func (p *idleProc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	<-p.exited
}

// idleMarker is an io.Writer that keeps the first idleMarkerKeep bytes
// written to it and closes seen once they hold mark.
type idleMarker struct {
	mark string
	seen chan struct{}

	mu  sync.Mutex
	buf []byte
}

const idleMarkerKeep = 64 << 10

func newIdleMarker(mark string) *idleMarker {
	return &idleMarker{mark: mark, seen: make(chan struct{})}
}

func (m *idleMarker) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.buf) >= idleMarkerKeep {
		return len(p), nil
	}
	m.buf = append(m.buf, p[:min(len(p), idleMarkerKeep-len(m.buf))]...)
	select {
	case <-m.seen:
	default:
		if bytes.Contains(m.buf, []byte(m.mark)) {
			close(m.seen)
		}
	}
	return len(p), nil
}

// head returns the start of the output, for an error message.
func (m *idleMarker) head() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return string(m.buf[:min(len(m.buf), 2048)])
}

// threadsCPU is a reading of a process's CPU time: by thread, in
// nanoseconds (Linux: /proc/PID/task/TID/schedstat), and in all
// (procCPU: whole clock ticks, but counting threads that ended).
type threadsCPU struct {
	threads map[string]time.Duration // nil where unreadable
	total   time.Duration
}

// readThreadsCPU reads process pid's CPU time.
func readThreadsCPU(pid int) (threadsCPU, error) {
	total, err := procCPU(pid)
	if err != nil {
		return threadsCPU{}, err
	}
	r := threadsCPU{total: total}
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return r, nil
	}
	r.threads = make(map[string]time.Duration, len(tasks))
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		f := bytes.Fields(b)
		if err != nil || len(f) == 0 {
			continue // a thread that ended meanwhile: see to
		}
		ns, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return threadsCPU{total: total}, nil
		}
		r.threads[t.Name()] = time.Duration(ns)
	}
	return r, nil
}

// to returns the CPU time used from r to a later reading of the same
// process: the sum of its threads' when every thread of r was still
// there at the later one (a new thread counts whole), else the difference
// of the totals.
func (r threadsCPU) to(later threadsCPU) time.Duration {
	if r.threads == nil || later.threads == nil {
		return later.total - r.total
	}
	var d time.Duration
	for tid, ns := range later.threads {
		d += ns - r.threads[tid]
	}
	for tid := range r.threads {
		if _, ok := later.threads[tid]; !ok {
			return later.total - r.total
		}
	}
	return d
}
