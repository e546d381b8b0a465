package robotexec_test

// End-to-end test of simulated time: robotexec run with use_sim_time,
// driven by robotexec play -clock.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// TestUseSimTime: a node's 100 ms timer on use_sim_time fires ten times
// per recorded second while play -clock -rate 10 plays 4 recorded seconds
// in 0.4 s, and its beats carry the recording's time.
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
	time.Sleep(300 * time.Millisecond) // the last beats on their way
	run.signal(t, os.Interrupt)
	require.Equal(t, 0, run.wait(t, quickExit), "%s", run)

	var times []time.Time
	for _, l := range watch.stdout.all() {
		if l == "robot/heartbeat probe" {
			continue
		}
		var b struct{ Time string }
		payload := l[len("robot/heartbeat "):]
		require.NoError(t, json.Unmarshal([]byte(payload), &b), l)
		at, err := time.Parse(time.RFC3339Nano, b.Time)
		require.NoError(t, err)
		times = append(times, at)
	}
	t.Logf("play took %v for 4 recorded seconds; %d beats", took.Round(time.Millisecond), len(times))
	require.Less(t, took, 2*time.Second, "rate 10")
	// Started with the first clock message; 10 a recorded second, a few
	// lost to the start (the clock messages before the nodes subscribed).
	require.GreaterOrEqual(t, len(times), 36)
	require.LessOrEqual(t, len(times), 40)
	for i, at := range times {
		require.False(t, at.Before(t0) || at.After(t0.Add(4*time.Second)), "beat at %v, outside the recording", at)
		if i > 0 {
			require.Equal(t, 100*time.Millisecond, at.Sub(times[i-1]), "one beat per 100 ms of recorded time")
		}
	}
}
