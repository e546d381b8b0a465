package app

// Tests of recording a run (robotexec run -record): the file is read
// back with the recording package, as replay and info read it.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/recording"
	"github.com/robotexec/robotexec/timers"
)

const recordConfig = `executor: { workers: 2, timer_source: go, queue_depth: 100 }
mqtt: { listen: "127.0.0.1:0", client_id: app-record, qos: 1 }
nodes:
  - { name: relay, type: bridge, params: { from: in/+, to: out/+ } }
  - { name: beat, type: heartbeat, params: { topic: hb, period: 20ms } }
`

// TestRunRecording records a run of a relay and a heartbeat: the file
// holds the config as written, the run's start and stop, every message
// that came in from outside, every publication of the nodes, and the
// heartbeat's timer calls.
func TestRunRecording(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, recordConfig)
	path := filepath.Join(t.TempDir(), "run.mcap")
	began := time.Now()
	a := startApp(t, cfg, nil, Options{Record: path})
	w := connectPaho(t, a.broker.URL(), "app-record-watch")
	w.subscribe(t, "out/#")
	w.subscribe(t, "hb")
	const n = 10
	for i := range n {
		w.publish(t, "in/a", strconv.Itoa(i), false)
	}
	w.await(t, "the relay's output", n, onTopic("out/a"))
	w.await(t, "three beats", 3, onTopic("hb"))
	require.NoError(t, shutdownWithin(t, a))
	ended := time.Now()

	run := readRun(t, path)
	meta := run.sum.Metadata
	yaml, err := os.ReadFile(cfg.File)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"file": cfg.File, "yaml": string(yaml)}, meta[MetaConfig])
	start := metaTime(t, meta[MetaRun]["start"])
	stop := metaTime(t, meta[MetaStop]["time"])
	require.Equal(t, "0", meta[MetaStop]["dropped"])
	var runs Runs
	require.NoError(t, json.Unmarshal([]byte(meta[MetaStop]["runs"]), &runs))
	require.Equal(t, Runs{"relay": {"subscription bridge": {Runs: n}}, "beat": {}}, runs,
		"the relay ran each input; the heartbeat, listed, has only a periodic timer")
	require.False(t, start.Before(began.Add(-time.Second)) || stop.Before(start) || stop.After(ended), "start %v, stop %v", start, stop)

	require.Equal(t, n, run.count[recKey{recording.Input, "", "in/a"}], "the inputs")
	require.Equal(t, n, run.count[recKey{recording.Output, "relay", "out/a"}], "the relay's publications")
	var want []string
	for i := range n {
		want = append(want, strconv.Itoa(i))
	}
	require.Equal(t, want, run.relayed)
	beats := run.count[recKey{recording.Output, "beat", "hb"}]
	require.GreaterOrEqual(t, beats, 3, "the heartbeat's publications")
	require.InDelta(t, beats, len(run.calls), 1, "one timer call per beat")
	for i, c := range run.calls {
		require.False(t, c.Expected.Before(start) || c.Expected.After(stop), "call %d expected at %v", i, c.Expected)
		if i > 0 {
			// One period after the last call, plus the deadlines that
			// the last call skipped (its Missed: those after its own).
			prev := run.calls[i-1]
			require.Equal(t, time.Duration(1+prev.Missed)*20*time.Millisecond, c.Expected.Sub(prev.Expected), "call %d", i)
		}
	}
}

// TestRunRecordingCountsRuns: the stop's record counts the messages each
// subscription ran and the calls of each one-shot timer with the time of
// the last, by node and key, those made but never run too, and lists
// every node of the config.
func TestRunRecordingCountsRuns(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, recordConfig)
	path := filepath.Join(t.TempDir(), "runs.mcap")
	r, err := openRunRecording(path, cfg, discardLogger())
	require.NoError(t, err)
	h := r.hooks()
	sub := h.Counted("relay", "subscription bridge")
	for range 3 {
		require.True(t, sub())
	}
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	ring := h.Rings("relay", "one-shot timeout")
	require.True(t, ring(timers.Event{Expected: t0, Actual: t0.Add(time.Millisecond)}))
	require.True(t, ring(timers.Event{Expected: t0.Add(time.Second), Actual: t0.Add(time.Second + 3*time.Millisecond)}))
	h.Rings("relay", "one-shot timeout #2")
	require.NoError(t, r.end(time.Now()))
	var runs Runs
	require.NoError(t, json.Unmarshal([]byte(readRun(t, path).sum.Metadata[MetaStop]["runs"]), &runs))
	require.Equal(t, Runs{"relay": {
		"subscription bridge": {Runs: 3},
		"one-shot timeout":    {Runs: 2, Last: t0.Add(time.Second + 3*time.Millisecond)},
		"one-shot timeout #2": {},
	}, "beat": {}}, runs)
}

// recKey is a channel of a recording.
type recKey struct {
	role        recording.Role
	node, topic string
}

// recordedRun is what a recording of TestRunRecording's run holds.
type recordedRun struct {
	sum     *recording.Summary
	count   map[recKey]int // messages by channel
	relayed []string       // the payloads of the relay's output
	calls   []TimerCall
}

// readRun reads the recording at path, which must be complete.
func readRun(t *testing.T, path string) recordedRun {
	t.Helper()
	r := recordedRun{count: map[recKey]int{}}
	sum, err := recording.Scan(path, func(m recording.Message) error {
		r.count[recKey{m.Role, m.Node, m.Topic}]++
		switch {
		case m.Role == recording.Output && m.Topic == "out/a":
			r.relayed = append(r.relayed, string(m.Data))
		case m.Role == recording.TimerCall:
			var c TimerCall
			if err := json.Unmarshal(m.Data, &c); err != nil {
				return fmt.Errorf("timer call %q: %w", m.Data, err)
			}
			r.calls = append(r.calls, c)
		}
		return nil
	})
	require.NoError(t, err)
	require.True(t, sum.Complete)
	r.sum = sum
	return r
}

func metaTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err, "metadata time %q", s)
	return at
}

// TestRunRecordingErrors: a recording that cannot be written, or a config
// file that is gone by the start, fails the start before anything runs.
func TestRunRecordingErrors(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, recordConfig)
	dir := t.TempDir()
	_, err := Start(context.Background(), cfg, discardLogger(), Options{Record: filepath.Join(dir, "none", "run.mcap")})
	require.ErrorContains(t, err, "-record: ")
	require.ErrorIs(t, err, os.ErrNotExist)

	require.NoError(t, os.Remove(cfg.File))
	_, err = Start(context.Background(), cfg, discardLogger(), Options{Record: filepath.Join(dir, "run.mcap")})
	require.ErrorContains(t, err, "-record: the config: ")
	require.NoFileExists(t, filepath.Join(dir, "run.mcap"))
}
