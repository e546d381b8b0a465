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
	// Each reading of the clock is taken between two of the counter, and
	// again if the goroutine was held up meanwhile (a loaded machine).
	pair := func() (time.Time, int64) {
		for {
			c0 := Read()
			now := time.Now()
			c1 := Read()
			if float64(c1-c0)*f < float64(20*time.Microsecond) {
				return now, c0 + (c1-c0)/2
			}
		}
	}
	t0, c0 := pair()
	time.Sleep(20 * time.Millisecond)
	t1, c1 := pair()
	require.Greater(t, c1, c0)
	require.InEpsilon(t, float64(t1.Sub(t0)), float64(c1-c0)*f, 0.01, "20 ms on the counter")
}
