package robotexec_test

// End-to-end test of executor.gc_headroom under robotexec run, read from
// the Go runtime's metrics on /metrics.

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/gcpace"
)

// TestRunGCHeadroom: under 1 kHz traffic of 32 KiB messages through a
// bridge, robotexec run with the default executor.gc_headroom (32 MiB)
// raises the GC percentage above GOGC's, by what the process allocates
// in 100 ms (more than Go's smallest goal, 4 MiB, at this rate: at 4 KiB
// it is less), and no further than the headroom allows; with
// gc_headroom: 0 the percentage stays GOGC's 100 and the goal small.
// Once the traffic stops, the default's percentage returns to 100 and
// the goal to the live heap's within gcpace.Quiet: robotexec keeps the
// headroom's memory only while it allocates fast.
func TestRunGCHeadroom(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		executor string
		check    func(t *testing.T, percent, goal float64)
	}{
		{"default", "", func(t *testing.T, percent, goal float64) {
			require.Greater(t, percent, 100.0, "GC percentage")
			require.Greater(t, goal, float64(4<<20), "heap goal")
			require.Less(t, goal, float64(48<<20), "heap goal: the live heap and at most the headroom")
		}},
		{"off", ", gc_headroom: 0", func(t *testing.T, percent, goal float64) {
			require.Equal(t, 100.0, percent, "GC percentage")
			require.Less(t, goal, float64(30<<20), "heap goal")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := startPipeline(t, pipelineOptions{broker: "embedded", inProcess: true, executor: c.executor,
				nodes: "  - { name: relay, type: bridge, params: { from: fast/in, to: robot/fast } }\n"})
			waitHealthy(t, r)
			stop := sync.OnceFunc(publishKHz(t, r.url, "fast/in", 32<<10))
			defer stop()
			// The pacing follows the live heap that a collection found:
			// wait for two, then for the pacer's next look.
			deadline := time.Now().Add(2 * traffic)
			for r.metric(t, "go_gc_duration_seconds_count") < 2 {
				require.True(t, time.Now().Before(deadline), "no collection under the traffic")
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond)
			c.check(t, r.metric(t, "go_gc_gogc_percent"), r.metric(t, "go_memstats_next_gc_bytes"))
			stop()
			// Polled every half second: without the pacer's calm, the
			// scrapes' own allocation, polled every 250 ms, reached the
			// raised goal and brought the percentage down after 6 and 13 s.
			require.Eventually(t, func() bool { return r.metric(t, "go_gc_gogc_percent") == 100 }, gcpace.Quiet+3*time.Second, 500*time.Millisecond,
				"the GC percentage after the traffic")
			require.Less(t, r.metric(t, "go_memstats_next_gc_bytes"), float64(16<<20), "heap goal after the traffic")
		})
	}
}
