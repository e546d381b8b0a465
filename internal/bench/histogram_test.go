package bench_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bench"
)

// relErr is the histogram's worst relative error: half a bucket, 1/128.
const relErr = 1.0 / 128

func TestHistogramRecordsEveryMagnitude(t *testing.T) {
	for _, v := range []time.Duration{0, 1, 63, 64, 65, 127, 128, 1000, 4095, 4096, 123_457, time.Millisecond, 3 * time.Second, 30 * time.Minute} {
		h := bench.NewHistogram(1)
		h.Record(0, v)
		got := h.Percentile(1)
		require.InDelta(t, float64(v), float64(got), math.Max(1, float64(v)*relErr), "recorded %v, read %v", v, got)
		require.Equal(t, uint64(1), h.Count())
	}
}

func TestHistogramCountFrom(t *testing.T) {
	h := bench.NewHistogram(4)
	// 1..10000 µs, spread over the shards.
	for i := 1; i <= 10_000; i++ {
		h.Record(i, time.Duration(i)*time.Microsecond)
	}
	require.Equal(t, uint64(10_000), h.CountFrom(0))
	require.Equal(t, uint64(0), h.CountFrom(time.Second))
	for _, from := range []time.Duration{time.Microsecond, 640 * time.Microsecond, 5 * time.Millisecond, 10 * time.Millisecond} {
		want := float64(10_001 - int(from/time.Microsecond)) // the values of from or more
		got := float64(h.CountFrom(from))
		// Within the width of from's bucket (1/64 of its power of two).
		require.InDelta(t, want, got, math.Max(1, float64(from/time.Microsecond)/64), "from %v", from)
	}
}

func TestHistogramPercentiles(t *testing.T) {
	h := bench.NewHistogram(4)
	// 1..10000 µs, spread over the shards.
	for i := 1; i <= 10_000; i++ {
		h.Record(i, time.Duration(i)*time.Microsecond)
	}
	require.Equal(t, uint64(10_000), h.Count())
	for _, tt := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5000 * time.Microsecond}, {0.99, 9900 * time.Microsecond}, {0.999, 9990 * time.Microsecond}, {1, 10 * time.Millisecond}} {
		got := h.Percentile(tt.q)
		require.InDelta(t, float64(tt.want), float64(got), float64(tt.want)*relErr, "p%v: %v", tt.q*100, got)
	}
	ps := h.Percentiles(0.5, 0.99)
	require.Equal(t, []time.Duration{h.Percentile(0.5), h.Percentile(0.99)}, ps)

	h.Reset()
	require.Zero(t, h.Count())
	require.Equal(t, []time.Duration{0, 0}, h.Percentiles(0.5, 0.99), "an empty histogram reads 0")
}

func TestHistogramClampsOutOfRange(t *testing.T) {
	h := bench.NewHistogram(0) // at least one shard
	h.Record(-3, -time.Second)
	require.Zero(t, h.Percentile(1), "negative durations count as 0")
	h.Record(7, time.Duration(math.MaxInt64))
	require.Greater(t, h.Percentile(1), 15*time.Minute, "huge durations land in the last bucket")
}

func TestHistogramConcurrentRecord(t *testing.T) {
	h := bench.NewHistogram(8)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				h.Record(g+i, time.Duration(i)*time.Microsecond)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, uint64(8000), h.Count())
}
