package bench

// The /proc readings of the run and idle groups, which read Linux's /proc
// (their rows are measured on Linux).

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReadCPU reads this process's CPU time by thread as the idle group
// reads its processes'.
func TestReadCPU(t *testing.T) {
	before, err := readThreadsCPU(os.Getpid())
	require.NoError(t, err)
	require.NotEmpty(t, before.threads)
	spent := spinCPU(t, 50*time.Millisecond)
	after, err := readThreadsCPU(os.Getpid())
	require.NoError(t, err)
	require.GreaterOrEqual(t, before.to(after), spent*4/5, "the CPU time the process spent (getrusage) shows in its threads'")
}

// TestProcFigures reads this process's CPU and RSS as the run group reads
// its children's.
func TestProcFigures(t *testing.T) {
	rss, err := procRSS(os.Getpid())
	require.NoError(t, err)
	require.Greater(t, rss, int64(1<<20))
	before, err := procCPU(os.Getpid())
	require.NoError(t, err)
	spent := spinCPU(t, 50*time.Millisecond)
	after, err := procCPU(os.Getpid())
	require.NoError(t, err)
	// /proc's CPU times count in 10 ms ticks.
	require.GreaterOrEqual(t, after-before, spent-2*time.Second/clockTicks, "the CPU time the process spent (getrusage) shows in /proc")
}

// spinCPU spins until the process has spent at least d more CPU time, by
// getrusage, however long that takes on a loaded machine, and returns
// what it spent.
func spinCPU(t *testing.T, d time.Duration) time.Duration {
	t.Helper()
	start, ok := processCPU()
	require.True(t, ok, "getrusage")
	for {
		if now, _ := processCPU(); now-start >= d {
			return now - start
		}
	}
}

// TestRunQueueWait reads how long this process's threads waited for a
// CPU, as the timer rows' note does.
func TestRunQueueWait(t *testing.T) {
	w0, ok := runQueueWait()
	require.True(t, ok, "/proc/self/task/*/schedstat")
	w1, ok := runQueueWait()
	require.True(t, ok)
	require.GreaterOrEqual(t, w1, w0, "the threads' waits only grow")
	require.Equal(t, w1-w0, waitedBetween(w0, w1, true))
	require.Equal(t, time.Duration(-1), waitedBetween(w1+1, w1, true), "a thread ended between the readings")
	require.Equal(t, time.Duration(-1), waitedBetween(w0, w1, false))
}
