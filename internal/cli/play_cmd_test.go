package cli

// Tests of play: a recording published into the embedded broker of a
// robotexec instance, watched by a paho client.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/recording"
)

var playT0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// playRecording writes 20 messages 10 ms apart, alternately on play/a
// (JSON) and play/b (raw), and a timer call of a run, which play skips.
func playRecording(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "play.mcap")
	r, err := recording.Create(path, recording.Options{})
	require.NoError(t, err)
	for i := range 20 {
		topic, payload := "play/a", fmt.Sprintf(`{"i":%d}`, i)
		if i%2 == 1 {
			topic, payload = "play/b", fmt.Sprintf("raw %d", i)
		}
		require.True(t, r.Record(topic, []byte(payload), playT0.Add(time.Duration(i)*10*time.Millisecond)))
	}
	require.True(t, r.RecordAs(recording.TimerCall, "beat", "timer(10ms)", []byte(`{}`), playT0.Add(50*time.Millisecond)))
	_, err = r.Close()
	require.NoError(t, err)
	return path
}

// watcher collects, by topic and in order, what a paho client receives.
type watcher struct {
	mu  sync.Mutex
	got map[string][]string
}

func watch(t *testing.T, url, id string, filters ...string) *watcher {
	t.Helper()
	w := &watcher{got: map[string][]string{}}
	c := pahoClient(t, url, id)
	for _, f := range filters {
		tok := c.Subscribe(f, 1, func(_ paho.Client, m paho.Message) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.got[m.Topic()] = append(w.got[m.Topic()], string(m.Payload()))
		})
		require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "subscribe %s: %v", f, tok.Error())
	}
	return w
}

// await waits until the watcher has n messages on topic and returns them.
func (w *watcher) await(t *testing.T, topic string, n int) []string {
	t.Helper()
	var got []string
	require.Eventually(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		got = append([]string(nil), w.got[topic]...)
		return len(got) >= n
	}, traffic, 10*time.Millisecond, "%d messages on %s", n, topic)
	return got
}

// TestPlay: play publishes every message of the recording, in order, with
// its timing scaled by -rate, and says how many.
func TestPlay(t *testing.T) {
	t.Parallel()
	a := startApp(t, "cli-play", "  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 1h } }\n")
	rec := playRecording(t)
	w := watch(t, a.url, "cli-play-watcher", "play/#")
	start := time.Now()
	r := cli(t, "play", "-broker", a.url, "-rate", "2", rec)
	took := time.Since(start)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Empty(t, r.stdout)
	require.Equal(t, "robotexec play: 20 messages published, 0 failed\n", r.stderr)
	require.GreaterOrEqual(t, took, 90*time.Millisecond, "190 ms of recording at rate 2")
	var wantA, wantB []string
	for i := range 20 {
		if i%2 == 0 {
			wantA = append(wantA, fmt.Sprintf(`{"i":%d}`, i))
		} else {
			wantB = append(wantB, fmt.Sprintf("raw %d", i))
		}
	}
	require.Equal(t, wantA, w.await(t, "play/a", 10))
	require.Equal(t, wantB, w.await(t, "play/b", 10))
}

// TestPlayClockTopics: -topics plays only what its filters match; -clock
// also publishes the recording's time every 10 ms of it on -clock-topic,
// from the first message played to the last.
func TestPlayClockTopics(t *testing.T) {
	t.Parallel()
	a := startApp(t, "cli-play-clock", "  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 1h } }\n")
	rec := playRecording(t)
	w := watch(t, a.url, "cli-play-clock-watcher", "play/#", "sim/clock")
	r := cli(t, "play", "-broker", a.url, "-rate", "4", "-qos", "0", "-topics", "play/a,none/#", "-clock", "-clock-topic", "sim/clock", rec)
	require.Equal(t, ExitOK, r.code, "%s", r)
	// play/a at 0, 20, ... 180 ms: 10 messages and 19 clock ticks.
	require.Equal(t, "robotexec play: 29 messages published, 0 failed\n", r.stderr)
	require.Len(t, w.await(t, "play/a", 10), 10)
	ticks := w.await(t, "sim/clock", 19)
	require.Len(t, ticks, 19)
	for i, tick := range ticks {
		var c struct{ Time time.Time }
		require.NoError(t, json.Unmarshal([]byte(tick), &c), "tick %q", tick)
		require.Equal(t, playT0.Add(time.Duration(i)*clockEvery), c.Time, "tick %d", i)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	require.Empty(t, w.got["play/b"], "-topics leaves play/b out")
}

func TestPlayErrors(t *testing.T) {
	t.Parallel()
	rec := playRecording(t)
	notMCAP := filepath.Join(t.TempDir(), "x.mcap")
	writeFile(t, notMCAP, "nodes: []\n")
	usage := "robotexec play: want one FILE, -rate above 0 and -qos 0, 1 or 2\nUsage: robotexec play"
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no file", nil, ExitUsage, usage},
		{"two files", []string{rec, rec}, ExitUsage, usage},
		{"-rate 0", []string{"-rate", "0", rec}, ExitUsage, usage},
		{"-qos 3", []string{"-qos", "3", rec}, ExitUsage, usage},
		{"bad -topics", []string{"-topics", "play/a,b/#/c", rec}, ExitUsage, `robotexec play: -topics: subscribers: topic filter "b/#/c": '#' must be the last level`},
		{"bad -clock-topic", []string{"-clock-topic", "clock/+", rec}, ExitUsage, `robotexec play: -clock-topic: subscribers: topic "clock/+"`},
		{"not MCAP", []string{notMCAP}, ExitUsage, "robotexec play: " + notMCAP},
		{"missing", []string{rec + ".none"}, ExitUsage, "no such file or directory"},
		{"no broker", []string{"-broker", unreachable(t), "-timeout", refusedWait, rec}, ExitFailure, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := cli(t, append([]string{"play"}, tc.args...)...)
			require.Equal(t, tc.code, r.code, "%s", r)
			require.Empty(t, r.stdout)
			require.Contains(t, r.stderr, tc.want)
		})
	}
}
