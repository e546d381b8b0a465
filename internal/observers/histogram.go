package observers

import "math/bits"

// Buckets is the number of finite histogram buckets: upper bounds of
// 1 µs · 2^k for k = 0 … Buckets-1, from 1 µs to about 16.8 s, so that
// microsecond callbacks and second-long ones both fall in buckets that
// tell them apart. A last bucket counts what is above.
const Buckets = 25

// BucketBounds returns the upper bounds of the finite buckets in seconds,
// in increasing order.
func BucketBounds() []float64 {
	b := make([]float64, Buckets)
	for k := range b {
		b[k] = 1e-6 * float64(uint64(1)<<k)
	}
	return b
}

// scale converts clock ticks to nanoseconds and to histogram buckets.
type scale struct {
	nsPerTick float64
	// usPerTick32 is microseconds per tick in 32.32 fixed point.
	usPerTick32 uint64
	// maxTicks is the longest duration, in ticks, that falls in a finite
	// bucket; it also keeps ticks·usPerTick32 from overflowing.
	maxTicks int64
	// exact: a tick is a nanosecond.
	exact bool
}

func newScale(nsPerTick float64) scale {
	s := scale{nsPerTick: nsPerTick, usPerTick32: uint64(nsPerTick / 1000 * (1 << 32)), exact: nsPerTick == 1}
	s.maxTicks = int64(float64(uint64(1)<<(Buckets-1)) * 1000 / nsPerTick)
	return s
}

// nanoseconds is the scale of histograms kept in nanoseconds.
var nanoseconds = newScale(1)

// ns converts ticks to nanoseconds.
func (s *scale) ns(ticks int64) int64 {
	if s.exact {
		return ticks
	}
	return int64(float64(ticks) * s.nsPerTick)
}

// bucket returns the bucket of a duration of d ticks: the first k with
// d ≤ 2^k µs, or Buckets for longer ones. With one tick a nanosecond it is
// exact; with the time-stamp counter a bound may move by a part in 10^6.
func (s *scale) bucket(d int64) int {
	if d > s.maxTicks {
		return Buckets
	}
	if d <= 0 {
		return 0
	}
	if s.exact {
		return bits.Len64(uint64(d-1) / 1000)
	}
	q := uint64(d) * s.usPerTick32 // microseconds, 32.32
	if q <= 1<<32 {
		return 0
	}
	// (q-1)>>32 is the number of whole microseconds below d: 1 for
	// (1 µs, 2 µs], 2 or 3 for (2 µs, 4 µs], and so on.
	return bits.Len64((q - 1) >> 32)
}

// histogram counts durations in the buckets of BucketBounds.
//
// A histogram has a single writer: it is one worker's share of one
// callback's runs (see shard), and a worker's runs are sequential. So an
// observation is plain loads and stores, which cost a few cycles where
// atomic stores (XCHG on amd64) cost twenty. A snapshot reads the words
// without synchronization, which the Go memory model allows for word-sized
// values: each read sees some recent write, never a torn one; the race
// detector is told to look away (go:norace) from that one function.
type histogram struct {
	sum    int64 // in the unit of the histogram's scale
	counts [Buckets + 1]uint64
}

// observe counts a duration of d units of sc. Only one goroutine may call
// it at a time, and each call must happen after the previous one.
func (h *histogram) observe(sc *scale, d int64) {
	h.counts[sc.bucket(d)]++
	h.sum += d
}

// HistogramSnapshot is a histogram's content at one moment.
type HistogramSnapshot struct {
	// Counts holds the number of observations per bucket (not
	// cumulative); the last one counts those above every bound.
	Counts [Buckets + 1]uint64
	// Count is the number of observations, the sum of Counts.
	Count uint64
	// Sum is the sum of the observations, in nanoseconds.
	Sum int64
}

// addTo adds the histogram's content to s, converting its sum with sc.
// Taken while a run finishes, it may count the run in Count without its
// duration in Sum, or not at all; Count is always the sum of Counts.
func (h *histogram) addTo(s *HistogramSnapshot, sc *scale) {
	var counts [Buckets + 1]uint64
	var sum int64
	h.read(&counts, &sum)
	for i, c := range counts {
		s.Counts[i] += c
		s.Count += c
	}
	s.Sum += sc.ns(sum)
}

// read copies the histogram's words; see histogram for why it may race
// with observe.
//
//go:norace
func (h *histogram) read(counts *[Buckets + 1]uint64, sum *int64) {
	for i := range h.counts {
		counts[i] = h.counts[i] // one word at a time: never torn
	}
	*sum = h.sum
}

// Add adds o's observations to s.
func (s *HistogramSnapshot) Add(o HistogramSnapshot) {
	for i := range s.Counts {
		s.Counts[i] += o.Counts[i]
	}
	s.Count += o.Count
	s.Sum += o.Sum
}
