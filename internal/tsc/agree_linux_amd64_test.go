package tsc

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPairAgrees: the check finds a counter that is behind on one CPU of a
// pair, by 10 µs, and passes one that agrees, here on the first two CPUs
// that the process may run on (or the one twice).
func TestPairAgrees(t *testing.T) {
	cpus, ok := allowedCPUs()
	require.True(t, ok, "sched_getaffinity")
	a, b := cpus[0], cpus[len(cpus)-1]
	skew := uint64(10 * time.Microsecond / time.Nanosecond * 3) // ticks at up to 3 GHz
	behind := func() uint64 { return rdtscOrdered() - skew }
	for range 5 {
		require.False(t, pairAgrees(a, b, rdtscOrdered, behind), "b's counter %d ticks behind", skew)
		require.False(t, pairAgrees(a, b, behind, rdtscOrdered), "a's counter %d ticks behind", skew)
	}
	if !invariant() {
		t.Logf("the kernel does not report the counter invariant: not checked that one agrees")
		return
	}
	// Under load a CPU may not take its turns within agreeTimeout: one
	// check in 2 s must pass.
	for deadline := time.Now().Add(2 * time.Second); !pairAgrees(a, b, rdtscOrdered, rdtscOrdered); {
		require.True(t, time.Now().Before(deadline), "no check of one counter on CPUs %d and %d agreed in 2 s", a, b)
	}
}
