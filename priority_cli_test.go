package robotexec_test

// End-to-end test of priorities: robotexec run of a config whose nodes
// have a priority, on one worker kept busy.

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunPriorityServesTheHighFirst: a heartbeat every 2 ms, from another
// instance through the broker, feeds two stages whose callbacks take 10 ms
// each, on one worker: both always have a message waiting. With priority 1
// on one of them, it gets the worker but for the runs the starvation bound
// gives the other (one in every 17 or 18 here); without, they take turns.
func TestRunPriorityServesTheHighFirst(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		priority string
	}{{"with priority", "priority: 1, "}, {"without", ""}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			port := startHeartbeatSource(t, "2ms")
			mport := freePort(t)
			stages := fmt.Sprintf(`executor: { workers: 1, queue_depth: 4, overflow: drop_oldest }
mqtt: { broker: %s, client_id: robotexec-stages }
metrics: { listen: 127.0.0.1:%d }
nodes:
  - { name: low, type: stage, params: { input: in, output: out/low, work: 10ms } }
  - { name: high, type: stage, %sparams: { input: in, output: out/high, work: 10ms } }
`, brokerURL(port), mport, tt.priority)
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "stages.yaml"), stages)
			r := &pipelineRun{metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", mport)}
			r.proc = startRun(t, robotexecBin, filepath.Join(dir, "stages.yaml"))
			runs := func(node string) float64 {
				return r.metric(t, fmt.Sprintf(`robotexec_callback_duration_seconds_count{callback="stage",node=%q}`, node))
			}
			deadline := time.Now().Add(traffic)
			var low, high float64
			for low+high < 120 {
				require.True(t, time.Now().Before(deadline), "the stages ran %v and %v times", low, high)
				time.Sleep(100 * time.Millisecond)
				low, high = runs("low"), runs("high")
			}
			t.Logf("%s: high ran %v times, low %v", tt.name, high, low)
			if tt.priority != "" {
				require.GreaterOrEqual(t, high, 8*low, "the high priority comes first")
				require.GreaterOrEqual(t, low, 3.0, "the low one still runs")
			} else {
				require.LessOrEqual(t, high, 2*low, "they take turns")
				require.LessOrEqual(t, low, 2*high, "they take turns")
			}
		})
	}
}

// startHeartbeatSource runs robotexec with an embedded broker on a free
// port and a heartbeat on topic in every period, and returns the port.
func startHeartbeatSource(t *testing.T, period string) int {
	t.Helper()
	port := freePort(t)
	source := filepath.Join(t.TempDir(), "source.yaml")
	writeFile(t, source, fmt.Sprintf(`mqtt: { broker: embedded, listen: 127.0.0.1:%d, client_id: robotexec-source }
nodes:
  - { name: source, type: heartbeat, params: { topic: in, period: %s } }
`, port, period))
	startRun(t, robotexecBin, source)
	return port
}
