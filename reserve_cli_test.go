package robotexec_test

// End-to-end test of executor.reserve_for_timers through robotexec run
// and robotexec validate.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

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
