package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSpinGaps: on a clock that advances a microsecond a reading and
// jumps twice, the gaps past the bound are the jumps.
func TestSpinGaps(t *testing.T) {
	jumps := map[int]time.Duration{100: 300 * time.Microsecond, 500: 2 * time.Millisecond, 700: 150 * time.Microsecond}
	var at time.Duration
	reads := 0
	now := func() time.Duration {
		reads++
		at += time.Microsecond + jumps[reads]
		return at
	}
	n, longest := spinGaps(now, 10*time.Millisecond, 200*time.Microsecond)
	require.Equal(t, 2, n)
	require.Equal(t, 2*time.Millisecond+time.Microsecond, longest)
	require.GreaterOrEqual(t, at, 10*time.Millisecond)
}

// TestHostStalls: the probe spins for its time and reports a rate and a
// longest gap that agree: none without gaps, a gap past the bound with
// them.
func TestHostStalls(t *testing.T) {
	start := time.Now()
	s := HostStalls(50*time.Millisecond, 200*time.Microsecond)
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
	require.GreaterOrEqual(t, s.PerSecond, 0.0)
	if s.PerSecond == 0 {
		require.LessOrEqual(t, s.Longest, 200*time.Microsecond)
	} else {
		require.Greater(t, s.Longest, 200*time.Microsecond)
	}
	t.Logf("%.1f stalls a second, longest %v", s.PerSecond, s.Longest)
}
