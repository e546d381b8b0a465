package bench

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLineRoundTrip: with two processors the round trip is measured and
// positive; with one it is not measured.
func TestLineRoundTrip(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	rt, ok := LineRoundTrip()
	require.True(t, ok)
	require.Positive(t, rt)
	t.Logf("round trip %v", rt)
	runtime.GOMAXPROCS(1)
	_, ok = LineRoundTrip()
	require.False(t, ok)
}
