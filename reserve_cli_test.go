package robotexec_test

// End-to-end tests of executor.reserve_for_timers through robotexec run
// (of robotexec, and of a custom binary) and robotexec validate.

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunReserveForTimers: robotexec run starts the executor with
// reserve_for_timers as the config sets it, and says so; validate
// rejects a value that is not a boolean, with its line.
func TestRunReserveForTimers(t *testing.T) {
	t.Parallel()
	for _, reserve := range []bool{true, false} {
		t.Run(fmt.Sprintf("reserve_for_timers %v", reserve), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "reserve.yaml"), fmt.Sprintf(`executor: { workers: 2, reserve_for_timers: %v }
mqtt: { broker: embedded, listen: 127.0.0.1:%d, client_id: robotexec-reserve }
nodes:
  - { name: beat, type: heartbeat, params: { topic: beat, period: 10ms } }
`, reserve, freePort(t)))
			p := startRun(t, robotexecBin, filepath.Join(dir, "reserve.yaml"))
			running := strings.Join(p.stderr.all(), "\n")
			if reserve {
				require.Contains(t, running, "workers=2 reserve_for_timers=true ", "the start says what runs")
			} else {
				require.NotContains(t, running, " reserve_for_timers=")
			}
		})
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "executor:\n  workers: 2\n  reserve_for_timers: often\n")
	r := runCmd(t, quickExit, robotexecBin, nil, "validate", bad)
	require.Equal(t, 2, r.code, "%s", r)
	require.Contains(t, r.stderr, bad+":3: executor.reserve_for_timers: ", "%s", r)
}

// reserveNodes holds test nodes for the custom binary (buildCustomBinary):
// compute, a subscriber that computes a while per message; and kick,
// which every period publishes to its outputs and then arms a one-shot
// timer tick_after ahead, whose run logs how late it started.
const reserveNodes = `package imufilter

import (
	"context"
	"time"

	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

func init() {
	nodes.Register("compute", "test node that computes a while per message of input", newCompute)
	nodes.Register("kick", "test node that publishes every period, then runs a one-shot timer", newKick)
}

type computeParams struct {
	Input string        ` + "`yaml:\"input\"`" + `
	Work  time.Duration ` + "`yaml:\"work\"`" + `
}

func newCompute(n *nodes.Node) error {
	var p computeParams
	if err := n.Params(&p); err != nil {
		return err
	}
	n.Subscribe(p.Input, func(context.Context, subscribers.Message) {
		for start := time.Now(); time.Since(start) < p.Work; {
		}
	})
	return nil
}

type kickParams struct {
	Period    time.Duration ` + "`yaml:\"period\"`" + `
	Outputs   []string      ` + "`yaml:\"outputs\"`" + `
	TickAfter time.Duration ` + "`yaml:\"tick_after\"`" + `
}

func newKick(n *nodes.Node) error {
	var p kickParams
	if err := n.Params(&p); err != nil {
		return err
	}
	tick := n.OneShot(time.Hour, func(_ context.Context, ev timers.Event) {
		n.Logger().Info("tick", "late_us", ev.Late().Microseconds())
	})
	n.Timer(p.Period, func(ctx context.Context, _ timers.Event) {
		for _, o := range p.Outputs {
			_ = n.Publish(ctx, o, []byte("go"))
		}
		tick.ResetAt(time.Now().Add(p.TickAfter))
	})
	return nil
}
`

// TestRunReserveForTimersKeepsATimerOnTime: robotexec run of a custom
// binary's nodes on 2 workers. Every 300 ms kick readies a callback of
// priority 1 that computes 100 ms and one of priority 0 that computes 50
// ms, and arms a one-shot timer 8 ms ahead. With reserve_for_timers the
// second worker leaves the callback of priority 0 for the timer, which
// starts on time (from the second cycle: the first gives the callback's
// expected run time); without, the timer waits for that callback.
func TestRunReserveForTimersKeepsATimerOnTime(t *testing.T) {
	t.Parallel()
	bin := buildCustomBinary(t)
	lateness := regexp.MustCompile(`msg=tick .*late_us=(-?\d+)`)
	for _, reserve := range []bool{true, false} {
		t.Run(fmt.Sprintf("reserve_for_timers %v", reserve), func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "kick.yaml"), fmt.Sprintf(`executor: { workers: 2, reserve_for_timers: %v }
mqtt: { broker: embedded, listen: 127.0.0.1:%d, client_id: robotexec-kick }
nodes:
  - { name: kick, type: kick, params: { period: 300ms, outputs: [hot, slow], tick_after: 8ms } }
  - { name: hot, type: compute, priority: 1, params: { input: hot, work: 100ms } }
  - { name: slow, type: compute, params: { input: slow, work: 50ms } }
`, reserve, freePort(t)))
			p := startRun(t, bin, filepath.Join(dir, "kick.yaml"))
			var late []time.Duration
			deadline := time.Now().Add(10 * time.Second)
			for len(late) < 5 && time.Now().Before(deadline) {
				late = late[:0]
				for _, l := range p.stderr.all() {
					if m := lateness.FindStringSubmatch(l); m != nil {
						us, _ := strconv.Atoi(m[1])
						late = append(late, time.Duration(us)*time.Microsecond)
					}
				}
				time.Sleep(50 * time.Millisecond)
			}
			require.GreaterOrEqual(t, len(late), 5, "ticks: %v", late)
			t.Logf("the ticks' lateness: %v", late)
			after := slices.Sorted(slices.Values(late[1:]))
			if reserve {
				// Each would be 42 ms late or more behind the callback;
				// the median leaves one a stall of the machine.
				require.Less(t, after[len(after)/2], 25*time.Millisecond, "on time, not behind the callback of priority 0: %v", late)
			} else {
				// Each 42 ms late or more, but for one that found a
				// worker free at its deadline (seen once in CI: 213 µs).
				require.Greater(t, after[len(after)/2], 35*time.Millisecond, "behind the callback of priority 0: %v", late)
			}
		})
	}
}
