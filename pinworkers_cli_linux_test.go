package robotexec_test

// End-to-end test of executor.pin_workers: robotexec run's worker threads,
// as /proc shows them.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunPinWorkers: with pin_workers, robotexec run's two workers run on
// threads of their own, each bound to one CPU, the process's first two
// (where it has two or more); every other thread keeps the process's
// CPUs. Without, no thread is bound.
func TestRunPinWorkers(t *testing.T) {
	t.Parallel()
	for _, pin := range []bool{true, false} {
		t.Run(fmt.Sprintf("pin_workers %v", pin), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "pinned.yaml"), fmt.Sprintf(`executor: { workers: 2, pin_workers: %v }
mqtt: { broker: embedded, listen: 127.0.0.1:%d, client_id: robotexec-pinned }
nodes:
  - { name: beat, type: heartbeat, params: { topic: beat, period: 10ms } }
`, pin, freePort(t)))
			p := startRun(t, robotexecBin, filepath.Join(dir, "pinned.yaml"))
			running := strings.Join(p.stderr.all(), "\n")
			pid := p.cmd.Process.Pid
			if !pin {
				require.NotContains(t, running, " pin_workers=")
				time.Sleep(200 * time.Millisecond)
				process, bound := threadCPUs(t, pid)
				require.Empty(t, bound, "no thread bound without pin_workers (the process's CPUs: %s)", process)
				return
			}
			require.Contains(t, running, "workers=2 pin_workers=true ", "the start says what runs")
			var process string
			var bound []string
			for deadline := time.Now().Add(5 * time.Second); len(bound) < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				process, bound = threadCPUs(t, pid)
			}
			t.Logf("the process's CPUs %s; threads bound to %v", process, bound)
			if !strings.ContainsAny(process, ",-") {
				return // a one-CPU process: every thread is on its CPU
			}
			require.Len(t, bound, 2, "the two workers' threads, and no other, are bound")
			require.NotEqual(t, bound[0], bound[1], "the workers are on two CPUs")
		})
	}
}

// threadCPUs returns the CPUs of most threads of process pid (the
// process's: its Cpus_allowed_list), and the CPU lists of the threads
// whose CPUs differ.
func threadCPUs(t *testing.T, pid int) (process string, bound []string) {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	require.NoError(t, err)
	var lists []string
	count := map[string]int{}
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, task.Name()))
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				v = strings.TrimSpace(v)
				lists = append(lists, v)
				count[v]++
			}
		}
	}
	for v, n := range count {
		if n > count[process] {
			process = v
		}
	}
	for _, v := range lists {
		if v != process {
			bound = append(bound, v)
		}
	}
	return process, bound
}
