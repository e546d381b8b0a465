package observers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAnchorFollowsDrift runs a day of a counter whose true rate is 5
// parts per million off its calibration (calibrateWindow's error), with
// the monotonic clock slewed by another 100 ppm halfway through, as NTP
// does. Re-anchoring every second keeps the conversion within a
// microsecond, but for the second after each change of rate, when the
// error is at most half a second's worth of the change; the calibration
// alone would be off by more than 0.4 s by the end of the day.
func TestAnchorFollowsDrift(t *testing.T) {
	const nominal = 1 / 3.0 // calibrated ns per tick
	rate := nominal * (1 + 5e-6)
	var ticks, ns int64
	a := &anchor{nsPerTick: nominal}
	step := int64(float64(anchorEvery) / nominal)
	var steady, changing int64 // the worst errors
	for i := range 24 * 3600 {
		if i == 12*3600 {
			rate *= 1 + 100e-6
		}
		// A run halfway to the next anchor, converted by the current
		// anchor.
		mid := ticks + step/2
		truth := ns + int64(float64(step/2)*rate)
		if err := abs(a.at(mid) - truth); i == 0 || i == 12*3600 {
			changing = max(changing, err)
		} else {
			steady = max(steady, err)
		}
		ticks += step
		ns += int64(float64(step) * rate)
		// The pair is read with up to 50 ns of error.
		a = a.next(ticks, ns+int64(i%3-1)*50, nominal)
	}
	require.Less(t, steady, int64(time.Microsecond), "worst error over a day")
	require.Less(t, changing, int64(51*time.Microsecond), "worst error after a change of rate")
	single := &anchor{nsPerTick: nominal}
	require.Greater(t, abs(single.at(ticks)-ns), int64(400*time.Millisecond), "a single calibration")
}

// TestAnchorRejectsBadRate keeps the previous rate when a pair is far
// off, as when a reading was delayed.
func TestAnchorRejectsBadRate(t *testing.T) {
	a := &anchor{ticks: 0, ns: 0, nsPerTick: 1}
	b := a.next(1000, 1500, 1) // 50% off
	require.Equal(t, 1.0, b.nsPerTick)
	require.Equal(t, int64(1500), b.at(1000))
	c := b.next(2000, 2501, 1)
	require.InDelta(t, 1.001, c.nsPerTick, 1e-9)
}

func TestReadPair(t *testing.T) {
	for _, mono := range []bool{false, true} {
		c := newClock(mono)
		origin := time.Now()
		tk, ns, ok := c.readPair(origin)
		require.True(t, ok)
		require.GreaterOrEqual(t, ns, int64(0))
		require.NotZero(t, tk)
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
