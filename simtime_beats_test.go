package robotexec_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestUseSimTimeLockstep: a node's 100 ms timer on use_sim_time beats
// once for every period of a clock that moves half a period at a time,
// each beat stamped with its period, and again from a period after the
// time the clock jumps back to. The clock moves on only after the beat
// due is seen, so no two periods come in one step however slow the
// machine.
func TestUseSimTimeLockstep(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	url := brokerURL(port)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, cfg, fmt.Sprintf(`executor: { workers: 2, use_sim_time: true }
mqtt: { listen: 127.0.0.1:%d, client_id: simtime-lockstep-test, qos: 1 }
nodes:
  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 100ms } }
`, port))
	run := startProc(t, robotexecBin, nil, "run", cfg)
	run.stderr.waitFor(t, startup, "waiting for the clock topic")
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	const period, step = 100 * time.Millisecond, 50 * time.Millisecond
	clock := func(at time.Time) pubMsg {
		return pubMsg{"clock", fmt.Sprintf(`{"time":%q}`, at.Format(time.RFC3339Nano))}
	}
	publishUntil(t, url, func() bool {
		_, ok := run.stderr.find(func(l string) bool { return strings.Contains(l, "robotexec running") })
		return ok
	}, clock(t0))
	watch := startProc(t, robotexecBin, nil, "echo", "-broker", url, "-qos", "1", "robot/heartbeat")
	publishUntil(t, url, func() bool {
		_, ok := watch.stdout.find(func(l string) bool { return l == "robot/heartbeat probe" })
		return ok
	}, pubMsg{"robot/heartbeat", "probe"})

	c := connectClient(t, url, "simtime-lockstep-pub")
	send := func(m pubMsg) {
		tok := c.Publish(m.topic, 1, false, m.payload)
		require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "publish %v: %v", m, tok.Error())
	}
	var want []time.Time
	steps := func(from time.Time, n int) {
		for k := 1; k <= n; k++ {
			at := from.Add(time.Duration(k) * step)
			send(clock(at))
			if k%2 == 0 {
				want = append(want, at)
				waitBeatAt(t, watch, at, 1)
			}
		}
	}
	steps(t0, 20)
	// Back to 30 ms after the start: the beats again, from 130 ms.
	back := t0.Add(30 * time.Millisecond)
	send(clock(back))
	run.stderr.waitFor(t, traffic, "the clock went back")
	steps(back, 10)
	run.signal(t, os.Interrupt)
	require.Equal(t, 0, run.wait(t, quickExit), "%s", run)
	times, err := beatTimes(watch.stdout.all())
	require.NoError(t, err)
	require.Equal(t, want, times)
	require.Equal(t, t0.Add(period), want[0])
}

// waitBeats waits until the beats watch, a robotexec echo of
// robot/heartbeat, has printed satisfy done.
func waitBeats(t *testing.T, watch *proc, what string, done func([]time.Time) bool) {
	t.Helper()
	deadline := time.Now().Add(traffic)
	for {
		times, _ := beatTimes(watch.stdout.all())
		if done(times) {
			return
		}
		require.True(t, time.Now().Before(deadline), "no %s within %v; beats:\n%s",
			what, traffic, strings.Join(watch.stdout.all(), "\n"))
		time.Sleep(10 * time.Millisecond)
	}
}

// waitBeatAt waits until watch has printed n beats stamped at.
func waitBeatAt(t *testing.T, watch *proc, at time.Time, n int) {
	t.Helper()
	waitBeats(t, watch, fmt.Sprintf("%d beats at %v", n, at), func(times []time.Time) bool {
		k := 0
		for _, x := range times {
			if x.Equal(at) {
				k++
			}
		}
		return k >= n
	})
}

// checkPlayBeats checks the beats of one play of a recording whose clock
// went from `from` to end, beating every period: each after from and up
// to end, a whole number of periods after the one before, the last within
// a period of end. A timer called after the clock moved more than a
// period past its deadline skips the periods missed (as rclcpp's do), so
// a play may go periods without a beat when the process takes its clock
// messages late and in a burst (a stall of the machine; seen in CI: play
// -rate 10 took 1.2 s for 0.4 s, and beats .7 and .6 s apart).
// TestUseSimTimeLockstep checks a beat for every period when the clock
// moves a period at a time.
func checkPlayBeats(t *testing.T, times []time.Time, from, end time.Time, period time.Duration) {
	t.Helper()
	require.NotEmpty(t, times, "beats from %v", from)
	prev := from
	for i, at := range times {
		d := at.Sub(prev)
		require.True(t, d > 0 && (i == 0 || d%period == 0) && !at.After(end),
			"beat at %v: not after %v, a whole number of %v after the one before, up to %v: %v", at, from, period, end, times)
		prev = at
	}
	require.True(t, prev.After(end.Add(-period)), "last beat at %v, not within %v of %v: %v", prev, period, end, times)
	require.LessOrEqual(t, len(times), int(end.Sub(from)/period), "at most one beat a period: %v", times)
	if skipped := int(prev.Sub(times[0])/period) + 1 - len(times); skipped > 0 {
		t.Logf("%d periods from %v without a beat: %v", skipped, from, times)
	}
}

// jumpTarget returns the to= time of a "clock went back" log line.
func jumpTarget(t *testing.T, line string) time.Time {
	t.Helper()
	_, rest, ok := strings.Cut(line, " to=")
	require.True(t, ok, "%s", line)
	to, err := time.Parse(time.RFC3339Nano, strings.Fields(rest)[0])
	require.NoError(t, err, "%s", line)
	return to
}

// beatTimes returns the times of the heartbeats among lines that robotexec
// echo printed, leaving out the probes, and the first line it could not
// read.
func beatTimes(lines []string) ([]time.Time, error) {
	var times []time.Time
	for _, l := range lines {
		if l == "robot/heartbeat probe" {
			continue
		}
		var b struct{ Time string }
		if err := json.Unmarshal([]byte(strings.TrimPrefix(l, "robot/heartbeat ")), &b); err != nil {
			return times, fmt.Errorf("%q: %w", l, err)
		}
		at, err := time.Parse(time.RFC3339Nano, b.Time)
		if err != nil {
			return times, fmt.Errorf("%q: %w", l, err)
		}
		times = append(times, at)
	}
	return times, nil
}
