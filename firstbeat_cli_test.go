package robotexec_test

// End-to-end test of the start path (issue 44): robotexec run of the demo,
// started again and again under CPU load, must run its heartbeat every
// time. Once, a start never did: both workers parked and the timer's alarm
// thread waiting.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/robotexec/robotexec/internal/testenv"
)

// Bounds of TestRunFirstBeat.
const (
	// firstBeatStarts is how many starts the test makes, unless
	// firstBeatBudget is spent first; firstBeatShortStarts with -short.
	firstBeatStarts      = 200
	firstBeatShortStarts = 20
	// firstBeatLanes is how many starts run at once: a start waits about
	// a second for its first beat, mostly idle, so that 200 one after
	// the other would take more than 200 s. Four at once made 200 starts
	// in 62 s on 2 loaded cores.
	firstBeatLanes = 4
	// firstBeatBudget bounds the starts' time: once it is spent no start
	// begins, and the test says how many it made (about 70 of the 200 on
	// 2 loaded cores), so that the suite stays within its few minutes.
	firstBeatBudget = 20 * time.Second
	// firstBeatWithin is how late the first beat may come after its
	// deadline.
	firstBeatWithin = time.Second
	// firstBeatStall is how long a start whose first beat is late is
	// watched further before it counts as stalled and is sent SIGQUIT:
	// the failure then says whether the beat came late or never.
	firstBeatStall = 10 * time.Second
	// demoBeatPeriod is the heartbeat period of examples/config.yaml.
	demoBeatPeriod = time.Second
)

// TestRunFirstBeat starts robotexec run of the demo (examples/config.yaml,
// each start on a free port of its own) firstBeatStarts times,
// firstBeatLanes at once, while two goroutines of the test keep two
// threads busy, and requires every start's first heartbeat within
// firstBeatWithin of its deadline. A client of the embedded broker
// watches the heartbeat topic. A start whose beat does not come is sent
// SIGQUIT, so that the failure shows where its goroutines stand.
//
// It does not run in parallel with the other tests: its busy loops would
// slow them, and theirs would make its starts slower than the load it
// means to apply.
func TestRunFirstBeat(t *testing.T) {
	starts := firstBeatStarts
	if testing.Short() {
		starts = firstBeatShortStarts
	}
	demo, err := os.ReadFile("examples/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ports := make([]int, starts)
	for i := range ports {
		ports[i] = freePort(t)
	}
	dir := t.TempDir()
	stopLoad := testenv.BusyLoops(2)
	defer stopLoad()

	begin := time.Now()
	var next atomic.Int64
	results := make(chan beatStart, starts)
	var wg sync.WaitGroup
	for range firstBeatLanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1))
				if i > starts || time.Since(begin) > firstBeatBudget {
					return
				}
				results <- firstBeat(i, ports[i-1], demo, dir)
			}
		}()
	}
	wg.Wait()
	took := time.Since(begin)
	close(results)

	var lates []time.Duration
	made := 0
	for r := range results {
		made++
		if r.err != nil {
			t.Errorf("start %d of the demo: %v\n--- its stderr\n%s", r.i, r.err, r.stderr)
			continue
		}
		lates = append(lates, r.late)
	}
	if made < starts {
		t.Logf("the time budget of %v is spent: %d starts of %d made", firstBeatBudget, made, starts)
	}
	slices.Sort(lates)
	if len(lates) > 0 {
		t.Logf("%d starts in %v; their first beats came after their deadlines by %v at the median, %v at most",
			made, took.Round(time.Millisecond), lates[len(lates)/2].Round(time.Microsecond), lates[len(lates)-1].Round(time.Microsecond))
	}
}

// beatStart is the outcome of one start: how late its first beat came
// after its deadline, or what went wrong, with the process's stderr.
type beatStart struct {
	i      int
	late   time.Duration
	err    error
	stderr string
}

// firstBeat makes start i: robotexec run of the demo config demo with its
// embedded broker on port (the config written in dir), and waits for its
// first heartbeat. It runs on a goroutine of its own: it reports, and
// never fails the test itself.
func firstBeat(i, port int, demo []byte, dir string) (r beatStart) {
	r.i = i
	cfg := filepath.Join(dir, fmt.Sprintf("config-%d.yaml", i))
	const addr = "127.0.0.1:1883"
	if strings.Count(string(demo), addr) != 1 {
		r.err = fmt.Errorf("examples/config.yaml should name %s once", addr)
		return r
	}
	if r.err = os.WriteFile(cfg, []byte(strings.Replace(string(demo), addr, fmt.Sprintf("127.0.0.1:%d", port), 1)), 0o644); r.err != nil {
		return r
	}
	stderr := newLineLog()
	cmd := exec.Command(robotexecBin, "run", cfg)
	cmd.Env = testEnv()
	cmd.Stderr = stderr
	cmd.WaitDelay = quickExit
	started := time.Now()
	if r.err = cmd.Start(); r.err != nil {
		return r
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		stderr.close()
		close(exited)
	}()
	defer func() {
		r.err = errors.Join(r.err, stopStart(cmd, exited))
		if r.err != nil {
			r.stderr = strings.Join(stderr.all(), "\n")
		}
	}()
	r.late, r.err = awaitFirstBeat(cmd, exited, stderr, port, i, started)
	return r
}

// awaitFirstBeat subscribes to the heartbeat topic of the start i on port
// (its process cmd, started at started, writing stderr, exited closed when
// it has exited) as soon as its broker listens, and returns how late the
// first beat came after its deadline; an error when it came more than
// firstBeatWithin late or not at all (the process is then sent SIGQUIT,
// and waited for).
func awaitFirstBeat(cmd *exec.Cmd, exited <-chan struct{}, stderr *lineLog, port, i int, started time.Time) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), startup)
	defer cancel()
	has := func(substr string) func(string) bool {
		return func(s string) bool { return strings.Contains(s, substr) }
	}
	if _, err := stderr.await(ctx, has("embedded MQTT broker listening")); err != nil {
		return 0, fmt.Errorf("waiting for the embedded broker: %w", err)
	}
	beats := make(chan beatArrival, 1)
	c := paho.NewClient(paho.NewClientOptions().AddBroker(brokerURL(port)).
		SetClientID(fmt.Sprintf("firstbeat-%d", i)).SetAutoReconnect(false))
	if tok := c.Connect(); !tok.WaitTimeout(startup) || tok.Error() != nil {
		return 0, fmt.Errorf("connecting to the embedded broker: %v", tok.Error())
	}
	defer c.Disconnect(0)
	tok := c.Subscribe("robot/heartbeat", 1, func(_ paho.Client, m paho.Message) {
		select {
		case beats <- beatArrival{at: time.Now(), payload: m.Payload()}:
		default: // only the first counts
		}
	})
	if !tok.WaitTimeout(startup) || tok.Error() != nil {
		return 0, fmt.Errorf("subscribing to robot/heartbeat: %v", tok.Error())
	}
	subscribed := time.Now()
	if _, err := stderr.await(ctx, has("robotexec running")); err != nil {
		return 0, fmt.Errorf("waiting for robotexec running: %w", err)
	}
	// The heartbeat's timer started before "robotexec running": its first
	// deadline is at most a period (rounded up to the timers' grid of a
	// millisecond) after that line was read.
	running := time.Now()
	due := running.Add(demoBeatPeriod + time.Millisecond)
	select {
	case a := <-beats:
		return beatLateness(a, started, subscribed)
	case <-time.After(time.Until(due.Add(firstBeatWithin))):
	}
	select {
	case a := <-beats:
		late, err := beatLateness(a, started, subscribed)
		return late, fmt.Errorf("no heartbeat within %v of its deadline: %w", firstBeatWithin, err)
	case <-time.After(firstBeatStall):
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-exited:
		case <-time.After(quickExit):
		}
		return 0, fmt.Errorf("no heartbeat %v after robotexec running: stalled (its goroutines, after SIGQUIT, are in its stderr)",
			time.Since(running).Round(time.Millisecond))
	}
}

// beatArrival is a heartbeat and when the outside client got it.
type beatArrival struct {
	at      time.Time
	payload []byte
}

// beatLateness returns how late the first beat of a start came after its
// deadline, from a, the first beat that the outside client (subscribed at
// subscribed; the process started at started) got; an error when that is
// more than firstBeatWithin.
func beatLateness(a beatArrival, started, subscribed time.Time) (time.Duration, error) {
	var b struct {
		Seq  uint64    `json:"seq"`
		Time time.Time `json:"time"` // the deadline the beat served
	}
	if err := json.Unmarshal(a.payload, &b); err != nil {
		return 0, fmt.Errorf("heartbeat %s: %w", a.payload, err)
	}
	late := a.at.Sub(b.Time)
	if b.Seq != 1 {
		// Beat 1 went out before the subscription took effect: it ran
		// before subscribed, and its deadline was at least a period after
		// the process started.
		late = subscribed.Sub(started.Add(demoBeatPeriod))
	}
	if late > firstBeatWithin {
		return late, fmt.Errorf("the first heartbeat came %v after its deadline (the first one seen: %s)", late, a.payload)
	}
	return late, nil
}

// stopStart stops a start with SIGINT (its process, unless it exited
// already), or SIGKILL if it does not exit within stopWithin; it returns
// an error for an exit other than a clean one, or a SIGQUIT's.
func stopStart(cmd *exec.Cmd, exited <-chan struct{}) error {
	select {
	case <-exited:
		return nil // after SIGQUIT: the failure is told already
	default:
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-exited:
		if code := cmd.ProcessState.ExitCode(); code != 0 {
			return fmt.Errorf("exit %d after SIGINT", code)
		}
		return nil
	case <-time.After(stopWithin):
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("still running %v after SIGINT", stopWithin)
	}
}
