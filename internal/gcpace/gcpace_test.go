package gcpace_test

import (
	"math"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/gcpace"
)

const mib = 1 << 20

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		base              int
		headroom, scanned uint64
		want              int
	}{
		{100, 32 * mib, 1 * mib, 800}, // Go's smallest goal, 4 MiB at 100%, rules
		{100, 32 * mib, 8 * mib, 400},
		{100, 32 * mib, 6 * mib, 534}, // rounded up: at least the headroom
		{100, 32 * mib, 32 * mib, 100},
		{100, 32 * mib, 64 * mib, 100},
		{200, 32 * mib, 32 * mib, 200},
		{100, 32 * mib, 0, 100},                // no collection yet
		{100, math.MaxInt64, 1, math.MaxInt32}, // capped
	} {
		require.Equal(t, c.want, gcpace.Percent(c.base, c.headroom, c.scanned), "%+v", c)
	}
}

// gcPercent returns the process's GC percentage.
func gcPercent() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// awaitPercent waits until the GC percentage satisfies ok, collecting
// meanwhile so that the live heap is known, for at most 5 s.
func awaitPercent(t *testing.T, what string, ok func(uint64) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok(gcPercent()) {
		require.True(t, time.Now().Before(deadline), "%s: the GC percentage is %d", what, gcPercent())
		runtime.GC()
		time.Sleep(gcpace.Interval / 2)
	}
}

// live keeps the test's live heap at about 16 MiB.
var live []byte

// TestPacers: with 16 MiB live, a Pacer of 256 MiB raises the GC
// percentage to about 1,600; one of 24 MiB, running beside it, takes over
// when it stops (about 150); the percentage is restored when the last
// stops.
func TestPacers(t *testing.T) {
	t.Setenv("GOGC", "")
	live = make([]byte, 16*mib)
	defer func() { live = nil }()
	require.EqualValues(t, 100, gcPercent())
	a := gcpace.Start(256 * mib)
	require.NotNil(t, a)
	t.Cleanup(a.Stop)
	awaitPercent(t, "one pacer", func(p uint64) bool { return p > 1000 })
	runtime.GC()
	m := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(m)
	headroom := m[0].Value.Uint64() - m[1].Value.Uint64()
	require.InDelta(t, 256*mib, headroom, 256*mib/10, "the heap goal is the live heap and the headroom")
	b := gcpace.Start(24 * mib)
	t.Cleanup(b.Stop)
	a.Stop()
	a.Stop() // idempotent
	awaitPercent(t, "the smaller pacer left", func(p uint64) bool { return p > 100 && p < 1000 })
	b.Stop()
	require.EqualValues(t, 100, gcPercent(), "restored")
}

// TestPacerOff: no headroom, or GOGC=off, leaves the collector alone.
func TestPacerOff(t *testing.T) {
	require.Nil(t, gcpace.Start(0))
	t.Setenv("GOGC", "off")
	require.Nil(t, gcpace.Start(32*mib))
	gcpace.Start(0).Stop() // a nil Pacer's Stop does nothing
	require.EqualValues(t, 100, gcPercent())
}
