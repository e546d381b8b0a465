package bench_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bench"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want float64
	}{
		{"empty", nil, 0},
		{"one", []float64{7}, 7},
		{"odd", []float64{5, 1, 3}, 3},
		{"even: mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"duplicates", []float64{2, 2, 2, 9}, 2},
		{"negative", []float64{-1, -5, 10}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.xs...)
			require.Equal(t, tt.want, bench.Median(tt.xs))
			require.Equal(t, in, append([]float64(nil), tt.xs...), "Median must not reorder its input")
		})
	}
}

func TestQuantile(t *testing.T) {
	s := []float64{10, 20, 30, 40, 50}
	tests := []struct {
		q, want float64
	}{
		{0, 10}, {0.25, 20}, {0.5, 30}, {0.75, 40}, {1, 50},
		{0.1, 14},         // interpolated between ranks 0 and 1
		{-1, 10}, {2, 50}, // clamped
	}
	for _, tt := range tests {
		require.InDelta(t, tt.want, bench.Quantile(s, tt.q), 1e-9, "q=%v", tt.q)
	}
	require.Zero(t, bench.Quantile(nil, 0.5))
	require.Equal(t, 3.0, bench.Quantile([]float64{3}, 0.9))
}

func TestPercentile(t *testing.T) {
	// 1..1000: the nearest-rank p99 is the 990th smallest.
	s := make([]int64, 1000)
	for i := range s {
		s[i] = int64(i + 1)
	}
	tests := []struct {
		q    float64
		want int64
	}{{0.5, 500}, {0.99, 990}, {0.999, 999}, {1, 1000}, {0.0001, 1}, {0, 1}}
	for _, tt := range tests {
		require.Equal(t, tt.want, bench.Percentile(s, tt.q), "q=%v", tt.q)
	}
	require.Zero(t, bench.Percentile([]int64(nil), 0.99))
	require.Equal(t, 2.5, bench.Percentile([]float64{1.5, 2.5}, 0.99))
}

func TestSummarize(t *testing.T) {
	s := bench.Summarize([]float64{12, 8, 10, 11, 9})
	require.Equal(t, bench.Summary{N: 5, Median: 10, Min: 8, Max: 12, Q1: 9, Q3: 11}, s)
	require.InDelta(t, 0.2, s.HalfRange(), 1e-9, "(12-8)/2/10")

	require.Equal(t, bench.Summary{}, bench.Summarize(nil))
	one := bench.Summarize([]float64{4})
	require.Equal(t, bench.Summary{N: 1, Median: 4, Min: 4, Max: 4, Q1: 4, Q3: 4}, one)
	require.Zero(t, one.HalfRange(), "one repetition has no spread")
	require.Zero(t, bench.Summarize([]float64{-1, 0, 1}).HalfRange(), "a zero median has no relative spread")
	require.False(t, math.IsNaN(bench.Summarize([]float64{0, 0}).HalfRange()))
}
