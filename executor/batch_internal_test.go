package executor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/tsc"
)

// TestBatchEndsOnAnotherCPU: timed on one CPU's counter, a batch ends when
// its worker reads the counter on another CPU, or moved while reading it
// at the start, however much of its budget is left; on the other clocks
// the CPU plays no part.
func TestBatchEndsOnAnotherCPU(t *testing.T) {
	e := New(Options{Workers: 1})
	w := e.workers[0]
	w.run = e.scope.NewRun()
	const never = math.MaxInt64
	if e.batchOn != onCPU {
		_, cpu := e.batchClock()
		require.Zero(t, cpu)
		require.False(t, e.batchEnds(w, never, 0))
		if tsc.LocalNsPerTick() == 0 {
			return
		}
		e.batchOn = onCPU // the counter ticks on each CPU: time on it too
	}
	require.True(t, e.batchEnds(w, never, tsc.NoCPU), "moved while reading at the start")
	for {
		_, cpu := e.batchClock()
		if cpu == tsc.NoCPU {
			continue // moved while reading: read again
		}
		require.True(t, e.batchEnds(w, never, cpu+1), "on CPU %d, not %d", cpu, cpu+1)
		return
	}
}
