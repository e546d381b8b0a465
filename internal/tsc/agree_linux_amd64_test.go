package tsc

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/threadsched"
)

// TestPairAgrees: on the first and last CPUs that the process may run on,
// the check passes readings that agree across CPUs, those of Go's
// monotonic clock, and finds them 10 µs behind on either CPU of the pair
// (100 ms with one processor). Whether this machine's counters agree is
// logged: that is the hardware's answer, not the check's.
func TestPairAgrees(t *testing.T) {
	cpus, err := threadsched.Allowed()
	require.NoError(t, err)
	if len(cpus) < 2 {
		t.Logf("one CPU: agree checks no pair")
		require.True(t, agree())
		return
	}
	a, b := cpus[0], cpus[len(cpus)-1]
	base := time.Now()
	mono := func() uint64 { return uint64(time.Since(base)) + 1e9 }
	skew := 10 * time.Microsecond
	if runtime.GOMAXPROCS(0) < 2 {
		skew = 100 * time.Millisecond // each hand-over waits for the scheduler
	}
	behind := func() uint64 { return mono() - uint64(skew) }
	for range 5 {
		require.False(t, pairAgrees(a, b, mono, behind), "b's clock %v behind", skew)
		require.False(t, pairAgrees(a, b, behind, mono), "a's clock %v behind", skew)
	}
	// Under load a CPU may not take its turns within agreeTimeout: one
	// check in 2 s must pass.
	for deadline := time.Now().Add(2 * time.Second); !pairAgrees(a, b, mono, mono); {
		require.True(t, time.Now().Before(deadline), "no check of the monotonic clock on CPUs %d and %d agreed in 2 s", a, b)
	}
	t.Logf("this machine's counters on CPUs %d and %d agree: %v (invariant: %v)", a, b, pairAgrees(a, b, rdtscOrdered, rdtscOrdered), invariant())
}
