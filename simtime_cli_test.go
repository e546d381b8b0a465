package robotexec_test

// End-to-end test of simulated time: robotexec run with use_sim_time,
// driven by robotexec play -clock.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/recording"
)

// writeRecording writes an MCAP file of a message on data/x every
// period for span, from t0.
func writeRecording(t *testing.T, path string, t0 time.Time, span, period time.Duration) {
	t.Helper()
	r, err := recording.Create(path, recording.Options{})
	require.NoError(t, err)
	for d := time.Duration(0); d <= span; d += period {
		require.True(t, r.Record("data/x", []byte(fmt.Sprintf(`{"at_ms":%d}`, d.Milliseconds())), t0.Add(d)))
	}
	_, err = r.Close()
	require.NoError(t, err)
}

// TestUseSimTime: a node's 100 ms timer on use_sim_time follows play
// -clock -rate 10, which plays 4 recorded seconds in 0.4 s: its beats
// carry the recording's time, a whole number of periods apart, to the
// recording's end (TestUseSimTimeLockstep: one every period).
func TestUseSimTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec.mcap")
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	writeRecording(t, rec, t0, 4*time.Second, 100*time.Millisecond)

	port := freePort(t)
	url := brokerURL(port)
	cfg := filepath.Join(dir, "config.yaml")
	writeFile(t, cfg, fmt.Sprintf(`executor: { workers: 2, use_sim_time: true }
mqtt: { listen: 127.0.0.1:%d, client_id: simtime-test, qos: 1 }
nodes:
  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 100ms } }
`, port))
	run := startProc(t, robotexecBin, nil, "run", cfg)
	run.stderr.waitFor(t, startup, "waiting for the clock topic")
	watch := startProc(t, robotexecBin, nil, "echo", "-broker", url, "-qos", "1", "robot/heartbeat")
	require.Eventually(t, func() bool {
		r := runCmd(t, quickExit, robotexecBin, nil, "pub", "-broker", url, "-qos", "1", "robot/heartbeat", "probe")
		_, ok := watch.stdout.find(func(l string) bool { return l == "robot/heartbeat probe" })
		return r.code == 0 && ok
	}, traffic, 200*time.Millisecond, "the watcher is subscribed")

	start := time.Now()
	p := runCmd(t, 2*quickExit, robotexecBin, nil, "play", "-broker", url, "-clock", "-rate", "10", rec)
	require.Equal(t, 0, p.code, "%s", p)
	took := time.Since(start)
	run.stderr.waitFor(t, traffic, "robotexec running")
	// A timer called late skips the periods missed, never the last one
	// the clock reached: the last beat is within a period of the end,
	// however late the process takes the clock messages.
	end := t0.Add(4 * time.Second)
	waitBeats(t, watch, "beat in the recording's last period", func(times []time.Time) bool {
		return len(times) > 0 && times[len(times)-1].After(end.Add(-100*time.Millisecond))
	})
	run.signal(t, os.Interrupt)
	require.Equal(t, 0, run.wait(t, quickExit), "%s", run)

	times, err := beatTimes(watch.stdout.all())
	require.NoError(t, err)
	// Play's pacing is play's own tests' (internal/cli); this shows it.
	t.Logf("play took %v for 4 recorded seconds; %d beats", took.Round(time.Millisecond), len(times))
	// From the first clock message on, one beat a period of recording
	// time but for periods skipped under load, to the recording's end.
	checkPlayBeats(t, times, t0, end, 100*time.Millisecond)
}

// TestUseSimTimeJumpBack: a second play -clock into a running process
// sets its clock back to the recording's start; the timers are re-armed
// on the new time, so the heartbeat beats again, from a period after it,
// without a restart, and the process says so in one log line.
func TestUseSimTimeJumpBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec.mcap")
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	const span, period = 2 * time.Second, 100 * time.Millisecond
	writeRecording(t, rec, t0, span, period)

	port := freePort(t)
	url := brokerURL(port)
	cfg := filepath.Join(dir, "config.yaml")
	writeFile(t, cfg, fmt.Sprintf(`executor: { workers: 2, use_sim_time: true }
mqtt: { listen: 127.0.0.1:%d, client_id: simtime-jump-test, qos: 1 }
nodes:
  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 100ms } }
`, port))
	run := startProc(t, robotexecBin, nil, "run", cfg)
	run.stderr.waitFor(t, startup, "waiting for the clock topic")
	// Started at t0 before the first play, so that it follows all of it.
	clock0 := fmt.Sprintf(`{"time":%q}`, t0.Format(time.RFC3339Nano))
	publishUntil(t, url, func() bool {
		_, ok := run.stderr.find(func(l string) bool { return strings.Contains(l, "robotexec running") })
		return ok
	}, pubMsg{"clock", clock0})
	watch := startProc(t, robotexecBin, nil, "echo", "-broker", url, "-qos", "1", "robot/heartbeat")
	publishUntil(t, url, func() bool {
		_, ok := watch.stdout.find(func(l string) bool { return l == "robot/heartbeat probe" })
		return ok
	}, pubMsg{"robot/heartbeat", "probe"})

	playIt := func() {
		p := runCmd(t, 2*quickExit, robotexecBin, nil, "play", "-broker", url, "-clock", "-rate", "5", rec)
		require.Equal(t, 0, p.code, "%s", p)
	}
	playIt()
	waitBeatAt(t, watch, t0.Add(span), 1)
	playIt()
	// The second play's first clock message the process takes may be a
	// few ms of recording time after its start: the timer starts again
	// from the time the clock jumped to.
	jump := run.stderr.waitFor(t, traffic, "the clock went back")
	to := jumpTarget(t, jump)
	require.False(t, to.Before(t0), "%s", jump)
	require.Less(t, to.Sub(t0), period, "%s", jump)
	last := to.Add((t0.Add(span).Sub(to) / period) * period)
	second := 1 // the second play's last beat
	if to.Equal(t0) {
		second = 2 // the first play's last beat too
	}
	waitBeatAt(t, watch, last, second)
	run.signal(t, os.Interrupt)
	require.Equal(t, 0, run.wait(t, quickExit), "%s", run)

	// One beat a period of recording time from the start, then one a
	// period from the time jumped to, but for periods skipped under load.
	times, err := beatTimes(watch.stdout.all())
	require.NoError(t, err)
	back := 0
	for i := 1; i < len(times); i++ {
		if !times[i].After(times[i-1]) {
			require.Zero(t, back, "one jump back in the beats: %v", times)
			back = i
		}
	}
	require.NotZero(t, back, "one jump back in the beats: %v", times)
	checkPlayBeats(t, times[:back], t0, t0.Add(span), period)
	checkPlayBeats(t, times[back:], to, t0.Add(span), period)
	require.Zero(t, times[0].Sub(t0)%period, "the first play's beats on its start's periods: %v", times)
	require.Zero(t, times[back].Sub(to)%period, "the second play's beats on the periods from %v: %v", to, times)
	var jumps []string
	for _, l := range run.stderr.all() {
		if strings.Contains(l, "the clock went back") {
			jumps = append(jumps, l)
		}
	}
	require.Len(t, jumps, 1, "one jump back")
	require.Contains(t, jumps[0], "timers re-armed")
	require.Contains(t, jumps[0], "from="+t0.Add(span).Format(time.RFC3339Nano))
}

// TestUseSimTimeWatchdogJumpBack: under use_sim_time, a clock that jumps
// back (a playback that starts over) re-arms the watchdog's timeouts on
// the new time: a topic that was live at the jump falls stale a timeout
// after it, not when the clock catches up with its deadline of before.
// One client publishes the clock and the watched topics, each acknowledged
// before the next, and the process runs one worker: the messages are
// handled in the order published.
func TestUseSimTimeWatchdogJumpBack(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	url := brokerURL(port)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, cfg, fmt.Sprintf(`executor: { workers: 1, use_sim_time: true }
mqtt: { listen: 127.0.0.1:%d, client_id: simtime-watchdog-test, qos: 1 }
nodes:
  - { name: wd, type: watchdog, params: { watch: data/+, timeout: 1s, alarm: robot/alarm } }
`, port))
	run := startProc(t, robotexecBin, nil, "run", cfg)
	run.stderr.waitFor(t, startup, "waiting for the clock topic")
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := func(d time.Duration) pubMsg {
		return pubMsg{"clock", fmt.Sprintf(`{"time":%q}`, t0.Add(d).Format(time.RFC3339Nano))}
	}
	publishUntil(t, url, func() bool {
		_, ok := run.stderr.find(func(l string) bool { return strings.Contains(l, "robotexec running") })
		return ok
	}, clock(0))
	watch := startProc(t, robotexecBin, nil, "echo", "-broker", url, "-qos", "1", "robot/alarm")
	publishUntil(t, url, func() bool {
		_, ok := watch.stdout.find(func(l string) bool { return l == "robot/alarm probe" })
		return ok
	}, pubMsg{"robot/alarm", "probe"})
	alarms := func() []string {
		var out []string
		for _, l := range watch.stdout.all() {
			var a struct{ Topic, State string }
			if p, ok := strings.CutPrefix(l, "robot/alarm "); ok && json.Unmarshal([]byte(p), &a) == nil {
				out = append(out, a.Topic+" "+a.State)
			}
		}
		return out
	}
	waitAlarms := func(want ...string) {
		deadline := time.Now().Add(traffic)
		for len(alarms()) < len(want) {
			require.True(t, time.Now().Before(deadline), "alarms %q, want %q within %v\n%s", alarms(), want, traffic, run)
			time.Sleep(10 * time.Millisecond)
		}
		require.Equal(t, want, alarms())
	}

	c := connectClient(t, url, "simtime-watchdog-pub")
	send := func(msgs ...pubMsg) {
		for _, m := range msgs {
			tok := c.Publish(m.topic, 1, false, m.payload)
			require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "publish %v: %v", m, tok.Error())
		}
	}
	// a at 0 s (deadline 1 s), b at 0.5 s (deadline 1.5 s); at 1.2 s a
	// is stale.
	send(pubMsg{"data/a", "1"}, clock(500*time.Millisecond), pubMsg{"data/b", "1"}, clock(1200*time.Millisecond))
	waitAlarms("data/a stale")
	// The clock goes back a minute: b has a second from there. The
	// clock's queue keeps the last message (depth 1): the next clock
	// message waits until the jump is handled, or the two would make one
	// jump, to 1.1 s later.
	send(clock(-time.Minute))
	run.stderr.waitFor(t, traffic, "the clock went back")
	send(clock(-time.Minute + 1100*time.Millisecond))
	waitAlarms("data/a stale", "data/b stale")
	send(pubMsg{"data/a", "2"})
	waitAlarms("data/a stale", "data/b stale", "data/a ok")
}
