package bench

import (
	"math"
	"slices"
)

// Summary describes the repetitions of one measurement: their median and
// their spread.
type Summary struct {
	// N is the number of repetitions.
	N int `json:"n"`
	// Median is the median of the repetitions, the figure quoted.
	Median float64 `json:"median"`
	// Min and Max bound the repetitions.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Q1 and Q3 are the first and third quartiles (Quantile 0.25 and
	// 0.75); Q3-Q1 is the interquartile range.
	Q1 float64 `json:"q1"`
	Q3 float64 `json:"q3"`
}

// Summarize returns the summary of xs. It does not modify xs.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Summary{
		N:      len(s),
		Median: Quantile(s, 0.5),
		Min:    s[0],
		Max:    s[len(s)-1],
		Q1:     Quantile(s, 0.25),
		Q3:     Quantile(s, 0.75),
	}
}

// HalfRange returns half the range of the repetitions relative to their
// median, as a fraction (0.03 is ±3%); 0 when there is at most one
// repetition or the median is 0.
func (s Summary) HalfRange() float64 {
	if s.N < 2 || s.Median == 0 {
		return 0
	}
	return (s.Max - s.Min) / 2 / math.Abs(s.Median)
}

// Swing returns how far apart the repetitions are as a factor: the largest
// over the smallest (1.5 when one is half again the other); 0 when there
// are fewer than two repetitions or the smallest is not positive, where a
// factor says nothing.
func (s Summary) Swing() float64 {
	if s.N < 2 || s.Min <= 0 {
		return 0
	}
	return s.Max / s.Min
}

// Median returns the median of xs: the middle element, or the mean of the
// two middle ones. It does not modify xs; it returns 0 for no elements.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Quantile(s, 0.5)
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of sorted, a sorted slice,
// interpolating linearly between the closest ranks (the definition of
// R's and NumPy's default): Quantile(s, 0.5) is the median. It returns 0
// for an empty slice.
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	h := q * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// Percentile returns the nearest-rank q-quantile (0 < q ≤ 1) of sorted, a
// sorted slice: the smallest element such that at least a fraction q of the
// elements are at most it. Latency percentiles use it: the p99 of 1,000
// samples is the 990th smallest. It returns 0 for an empty slice.
func Percentile[T int64 | float64](sorted []T, q float64) T {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	k := int(math.Ceil(q*float64(n))) - 1
	return sorted[min(max(k, 0), n-1)]
}
