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

// awaitPercent waits until the GC percentage satisfies ok, for at most
// 5 s, collecting meanwhile so that the live heap is known, and
// allocating churn bytes before each collection, so that the allocation
// rate is known too. The pacer adjusts after a collection, on a goroutine
// of its own.
func awaitPercent(t *testing.T, what string, churn int, ok func(uint64) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok(gcPercent()) {
		require.True(t, time.Now().Before(deadline), "%s: the GC percentage is %d", what, gcPercent())
		allocate(churn)
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// garbage is what allocate allocates, and drops at once.
var garbage []byte

// allocate allocates n bytes of garbage, a MiB at a time: a collection
// that an allocation starts may find the piece being allocated live, and
// a single piece of 64 MiB would then count as live heap for the pacer's
// span, holding the percentage at a quarter of what the test awaits.
func allocate(n int) {
	for ; n > 0; n -= mib {
		allocatePiece(min(n, mib))
	}
}

// allocatePiece allocates n bytes of garbage. It is a call of its own so
// that no temporary of its caller's frame keeps them (as the race
// detector's build would).
//
//go:noinline
func allocatePiece(n int) {
	garbage = make([]byte, n)
	garbage = nil
}

// TestHeadroom: the headroom is what the allocation rate allocates in
// Period, at most the limit, and none before a rate is known.
func TestHeadroom(t *testing.T) {
	for _, c := range []struct {
		limit, allocated uint64
		elapsed          time.Duration
		want             uint64
	}{
		{32 * mib, 640 * mib, time.Second, 32 * mib},
		{32 * mib, 1024 * mib, time.Second, 32 * mib},
		{32 * mib, 80 * mib, time.Second, 4 * mib},
		{32 * mib, 40 * mib, 500 * time.Millisecond, 4 * mib},
		{32 * mib, 0, time.Second, 0},
		{32 * mib, 8 * mib, 0, 0},
	} {
		require.Equal(t, c.want, gcpace.Headroom(c.limit, c.allocated, c.elapsed), "%+v", c)
	}
}

// TestPacerFollowsAllocation: a process that allocates little between
// collections keeps Go's own pacing, whatever its headroom.
func TestPacerFollowsAllocation(t *testing.T) {
	t.Setenv("GOGC", "")
	live = make([]byte, 16*mib)
	defer func() { live = nil }()
	p := gcpace.Start(256 * mib)
	require.NotNil(t, p)
	defer p.Stop()
	// About 1 MiB every 20 ms, 50 MB a second: 2.5 MB of headroom, under
	// GOGC's 16 MiB.
	for range 20 {
		allocate(mib)
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	require.EqualValues(t, 100, gcPercent())
	// Allocating as fast, but with a Period of a minute, it gets the
	// headroom.
	defer gcpace.SetPeriod(time.Minute)()
	awaitPercent(t, "allocating 1 MiB each 20 ms for a minute", mib, func(p uint64) bool { return p > 1000 })
}

// TestCollections: the pacer's signal comes after every collection, and
// not after its stop.
func TestCollections(t *testing.T) {
	ended, stop := gcpace.Collections()
	for i := range 3 {
		runtime.GC()
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Fatalf("collection %d: no signal", i)
		}
	}
	stop()
	runtime.GC()
	runtime.GC()
	select {
	case <-ended:
		// The cleanup of the sentinel armed before the stop may signal
		// once; none is armed after it.
		runtime.GC()
		runtime.GC()
		require.Empty(t, ended, "a signal after the stop's next collection")
	default:
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
	// What the test allocates in a minute earns each Pacer its headroom.
	defer gcpace.SetPeriod(time.Minute)()
	live = make([]byte, 16*mib)
	defer func() { live = nil }()
	require.EqualValues(t, 100, gcPercent())
	a := gcpace.Start(256 * mib)
	require.NotNil(t, a)
	t.Cleanup(a.Stop)
	// About 1,600 once a collection found the 16 MiB: before, the pacer
	// went by the heap that the last collection found, smaller or none.
	awaitPercent(t, "one pacer", 64*mib, func(p uint64) bool { return p > 1000 && p < 2000 })
	runtime.GC()
	m := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(m)
	headroom := m[0].Value.Uint64() - m[1].Value.Uint64()
	// The percentage follows the largest heap of the pacer's span, which
	// a collection that caught a piece of churn live may have seen a few
	// MiB larger than the 16: the garbage between collections is at most
	// the headroom, and most of it.
	require.LessOrEqual(t, headroom, uint64(256*mib*11/10), "the heap goal is the live heap and at most the headroom")
	require.GreaterOrEqual(t, headroom, uint64(256*mib/2), "the heap goal is the live heap and most of the headroom")
	b := gcpace.Start(24 * mib)
	t.Cleanup(b.Stop)
	a.Stop()
	a.Stop() // idempotent
	awaitPercent(t, "the smaller pacer left", 64*mib, func(p uint64) bool { return p > 100 && p < 1000 })
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

// TestPacerCalms: once the allocation stops, the percentage returns to
// GOGC's within Quiet of the last collection, without one, and the
// free memory goes back to the OS.
func TestPacerCalms(t *testing.T) {
	t.Setenv("GOGC", "")
	defer gcpace.SetPeriod(time.Minute)()
	live = make([]byte, 16*mib)
	defer func() { live = nil }()
	p := gcpace.Start(256 * mib)
	require.NotNil(t, p)
	defer p.Stop()
	awaitPercent(t, "allocating", 64*mib, func(p uint64) bool { return p > 1000 })
	allocate(64 * mib) // garbage that the raised goal keeps
	before := released()
	start := time.Now()
	for gcPercent() != 100 {
		require.Less(t, time.Since(start), gcpace.Quiet+5*time.Second, "the GC percentage is still %d", gcPercent())
		time.Sleep(10 * time.Millisecond)
	}
	require.GreaterOrEqual(t, time.Since(start), gcpace.Quiet/2, "calmed while the allocation was recent")
	require.Eventually(t, func() bool { return released() >= before+32*mib }, 5*time.Second, 10*time.Millisecond,
		"released %d MiB, not the burst's garbage", (released()-before)/mib)
	time.Sleep(gcpace.Quiet + time.Second)
	require.EqualValues(t, 100, gcPercent(), "raised again without allocation")
}

// released returns the heap memory returned to the OS.
func released() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
