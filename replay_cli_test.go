package robotexec_test

// End-to-end tests of deterministic replay: robotexec run -record, then
// robotexec replay -check.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/recording"
)

// recordRun runs config with -record for about d, stops it with SIGINT,
// and returns the recording's path; during calls feed while it runs.
func recordRun(t *testing.T, dir, config string, d time.Duration, feed func()) string {
	t.Helper()
	path := filepath.Join(dir, "run.mcap")
	run := startRun(t, robotexecBin, config, "-record", path)
	until := time.Now().Add(d)
	if feed != nil {
		feed()
	}
	time.Sleep(time.Until(until))
	run.signal(t, os.Interrupt)
	require.Equal(t, 0, run.wait(t, stopWithin), "%s", run)
	_, ok := run.stderr.find(func(l string) bool {
		return strings.Contains(l, "recording written") && strings.Contains(l, "dropped=0")
	})
	require.True(t, ok, "%s", run)
	return path
}

// replayOf runs robotexec replay -check -o out with args (RECORDING
// [CONFIG]) and returns the result.
func replayOf(t *testing.T, out string, args ...string) result {
	t.Helper()
	return runCmd(t, quickExit, robotexecBin, nil, append([]string{"replay", "-check", "-o", out}, args...)...)
}

// outputsOf returns a recording's outputs as "topic payload" lines, in
// file order.
func outputsOf(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	_, err := recording.Scan(path, func(m recording.Message) error {
		if m.Role == recording.Output {
			out = append(out, m.Topic+" "+string(m.Data))
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestReplayExample: 5 s of examples/config.yaml recorded with run
// -record replays with -check, twice, with the same outputs; the same
// recording with a changed node fails the check, naming the topic, the
// message and the node.
func TestReplayExample(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, err := os.ReadFile("examples/config.yaml")
	require.NoError(t, err)
	port := freePort(t)
	text := strings.Replace(string(data), "listen: 127.0.0.1:1883", fmt.Sprintf("listen: 127.0.0.1:%d", port), 1)
	cfg := filepath.Join(dir, "config.yaml")
	writeFile(t, cfg, text)
	path := recordRun(t, dir, cfg, 5*time.Second, nil)

	info := runCmd(t, quickExit, robotexecBin, nil, "info", path)
	require.Equal(t, 0, info.code, "%s", info)
	require.Contains(t, info.stdout, "robot/imu0/filtered (output of imu_filter)")

	var outs [2][]string
	for i := range outs {
		out := filepath.Join(dir, fmt.Sprintf("replay%d.mcap", i))
		r := replayOf(t, out, path)
		require.Equal(t, 0, r.code, "%s", r)
		require.Contains(t, r.stderr, "the outputs match")
		outs[i] = outputsOf(t, out)
	}
	require.Greater(t, len(outs[0]), 1000, "5 s of sensors at 150 Hz, through a bridge")
	require.Equal(t, outs[0], outs[1], "two replays publish the same")

	changed := filepath.Join(dir, "changed.yaml")
	writeFile(t, changed, strings.Replace(text, "alpha: 0.1", "alpha: 0.2", 1))
	r := replayOf(t, filepath.Join(dir, "changed.mcap"), path, changed)
	require.Equal(t, 1, r.code, "%s", r)
	require.Contains(t, r.stderr, "robot/imu0/filtered: message 1 of ")
	require.Contains(t, r.stderr, `node "imu_filter" is not replayable`)

	// A node the recording does not know runs on the simulated clock.
	added := filepath.Join(dir, "added.yaml")
	writeFile(t, added, text+"  - { name: extra, type: heartbeat, params: { topic: robot/extra, period: 500ms } }\n")
	r = replayOf(t, filepath.Join(dir, "added.mcap"), path, added)
	require.Equal(t, 1, r.code, "%s", r)
	require.Regexp(t, `robot/extra: the replay published (9|10) messages, the recording has 0`, r.stderr)
	require.Contains(t, r.stderr, `node "extra"`)
}

// TestReplayAtTheStop: a pipeline whose slow stage has a full queue
// (overflow block, depth 10, 20 ms a message) when the run stops. The stop
// closes the subscriptions before the slow stage has drained its queue, so
// the next stage never runs what the slow one publishes while it drains
// (about ten messages: the queue's 200 ms of work against the closing of
// three callbacks). The recording counts what each subscription ran;
// replay -check runs as much, says what it did not run, and publishes
// exactly the recorded outputs, topic by topic: not one more.
func TestReplayAtTheStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	writeFile(t, cfg, fmt.Sprintf(`executor: { workers: 2, queue_depth: 10, overflow: block }
mqtt: { listen: 127.0.0.1:%d }
nodes:
  - { name: source, type: heartbeat, params: { topic: pipe/0, period: 2ms } }
  - { name: slow, type: stage, params: { input: pipe/0, output: pipe/1, work: 20ms } }
  - { name: next, type: stage, params: { input: pipe/1, output: pipe/2 } }
`, freePort(t)))
	path := recordRun(t, dir, cfg, time.Second, nil)

	out := filepath.Join(dir, "replay.mcap")
	r := replayOf(t, out, path)
	require.Equal(t, 0, r.code, "%s", r)
	require.Contains(t, r.stderr, "the outputs match")
	m := regexp.MustCompile(`the replay did not run (.*)\n`).FindStringSubmatch(r.stderr)
	require.NotNil(t, m, "%s", r)
	require.Regexp(t, `(^|, )[1-9]\d* of next's subscription stage(, |$)`, m[1], "the stop left the slow stage's last outputs unrun")
	want, got := byTopic(outputsOf(t, path)), byTopic(outputsOf(t, out))
	counts := func(m map[string][]string) map[string]int {
		n := map[string]int{}
		for topic, lines := range m {
			n[topic] = len(lines)
		}
		return n
	}
	require.Equal(t, counts(want), counts(got), "the replay publishes as many messages on each topic as the run did")
	require.Equal(t, want, got, "the replay publishes what the run did")
}

// byTopic groups "topic payload" lines by topic, in order.
func byTopic(lines []string) map[string][]string {
	out := map[string][]string{}
	for _, l := range lines {
		topic, _, _ := strings.Cut(l, " ")
		out[topic] = append(out[topic], l)
	}
	return out
}

// TestReplayInputs: messages from outside the process, through a bridge
// with max_rate and a watchdog whose alarms fire between bursts, replay
// with -check: inputs at their received times, one-shot timers on the
// simulated clock.
func TestReplayInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	port := freePort(t)
	cfg := filepath.Join(dir, "config.yaml")
	writeFile(t, cfg, fmt.Sprintf(`executor: { workers: 2 }
mqtt: { listen: 127.0.0.1:%d, client_id: replay-inputs, qos: 1 }
nodes:
  - { name: relay, type: bridge, params: { from: 'ext/+/in', to: 'robot/+/out', max_rate: 50 } }
  - { name: wd, type: watchdog, params: { watch: 'ext/+/in', timeout: 150ms, alarm: robot/alarm } }
  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 250ms } }
`, port))
	var sent int
	feed := func() {
		c := paho.NewClient(paho.NewClientOptions().AddBroker(brokerURL(port)).SetClientID("feeder"))
		tok := c.Connect()
		require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "connect: %v", tok.Error())
		defer c.Disconnect(100)
		for burst := range 4 {
			for i := range 40 {
				topic := fmt.Sprintf("ext/%d/in", i%2)
				tok := c.Publish(topic, 1, false, fmt.Sprintf(`{"burst":%d,"i":%d}`, burst, i))
				require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil)
				sent++
				time.Sleep(2 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond) // the watchdog falls stale
		}
	}
	path := recordRun(t, dir, cfg, 2*time.Second, feed)

	s, err := recording.Scan(path, nil)
	require.NoError(t, err)
	inputs, alarms := 0, 0
	for _, c := range s.Channels {
		switch {
		case c.Role == recording.Input:
			inputs += int(c.Messages)
		case c.Role == recording.Output && c.Topic == "robot/alarm":
			alarms += int(c.Messages)
		}
	}
	require.Equal(t, sent, inputs, "every message from outside is an input")
	require.GreaterOrEqual(t, alarms, 8, "stale and ok alarms between the bursts")

	r := replayOf(t, filepath.Join(dir, "replay.mcap"), path)
	require.Equal(t, 0, r.code, "%s", r)
	require.Contains(t, r.stderr, "the outputs match")
}
