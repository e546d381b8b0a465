package tsc

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCalibration checks the counter against the monotonic clock where it
// is trusted, and that it is not used where it is not.
func TestCalibration(t *testing.T) {
	f := NsPerTick()
	if !trusted() {
		require.Zero(t, f)
		return
	}
	require.NotZero(t, f)
	t0, c0 := time.Now(), Read()
	time.Sleep(20 * time.Millisecond)
	c1, d := Read(), time.Since(t0)
	require.Greater(t, c1, c0)
	require.InEpsilon(t, float64(d), float64(c1-c0)*f, 0.01, "20 ms on the counter")
}
