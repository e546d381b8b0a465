package robotexec_test

// End-to-end test of executor.priority_workers: robotexec run of a config
// whose one worker is kept busy by a slow callback, with a priority worker
// beside it and without.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunPriorityWorkers: a heartbeat every 5 ms, from another instance
// through the broker, feeds a stage that takes 1 s a message and one of
// priority 1 that takes none, on one worker. With a priority worker the
// urgent stage runs at the heartbeat's pace while the slow one holds the
// worker; without, it waits for each slow run (the priority orders the
// queued callbacks, but cannot free a busy worker).
func TestRunPriorityWorkers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		prio     int
		min, max float64 // the hot stage's runs over the window
	}{{"with a priority worker", 1, 100, 1e9}, {"without", 0, 0, 60}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			port := startHeartbeatSource(t, "5ms")
			mport := freePort(t)
			stages := fmt.Sprintf(`executor: { workers: 1, priority_workers: %d, queue_depth: 1, overflow: drop_oldest }
mqtt: { broker: %s, client_id: robotexec-stages }
metrics: { listen: 127.0.0.1:%d }
nodes:
  - { name: slow, type: stage, params: { input: in, output: out/slow, work: 1s } }
  - { name: hot, type: stage, priority: 1, params: { input: in, output: out/hot } }
`, tt.prio, brokerURL(port), mport)
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "stages.yaml"), stages)
			r := &pipelineRun{metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", mport)}
			r.proc = startRun(t, robotexecBin, filepath.Join(dir, "stages.yaml"))
			running := strings.Join(r.proc.stderr.all(), "\n")
			if tt.prio > 0 {
				require.Contains(t, running, "workers=1 priority_workers=1 ", "the start says what runs")
			} else {
				require.NotContains(t, running, "priority_workers")
			}
			runs := func(node string) float64 {
				return r.metric(t, fmt.Sprintf(`robotexec_callback_duration_seconds_count{callback="stage",node=%q}`, node))
			}
			// Once the slow stage has run, it runs on: every window of
			// 1.5 s holds a second of it on the worker.
			deadline := time.Now().Add(traffic)
			for runs("slow") < 1 {
				require.True(t, time.Now().Before(deadline), "the slow stage did not run")
				time.Sleep(50 * time.Millisecond)
			}
			hot0, slow0 := runs("hot"), runs("slow")
			time.Sleep(1500 * time.Millisecond)
			hot, slow := runs("hot")-hot0, runs("slow")-slow0
			t.Logf("%s: over 1.5 s the hot stage ran %v times, the slow one %v", tt.name, hot, slow)
			require.GreaterOrEqual(t, slow, 1.0, "the slow stage kept the worker busy")
			require.GreaterOrEqual(t, hot, tt.min)
			require.LessOrEqual(t, hot, tt.max)
		})
	}
}
