package bench

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Histogram records durations in log-linear buckets, with a relative error
// under 1/(2·subBuckets) (0.8%), from 0 to 2^(maxExp+1) nanoseconds (36
// minutes; longer ones count as that). Recording costs one atomic add, allocates nothing, and is safe
// for concurrent use; callers that record from many goroutines spread them
// over shards ([NewHistogram]) so that they rarely share a cache line. The
// zero Histogram is not usable; use NewHistogram.
type Histogram struct {
	shards [][]atomic.Uint64
}

const (
	subBits    = 6 // 64 linear sub-buckets per power of two
	subBuckets = 1 << subBits
	maxExp     = 40
	numBuckets = (maxExp - subBits + 2) * subBuckets
)

// NewHistogram returns an empty histogram with the given number of shards
// (at least 1).
func NewHistogram(shards int) *Histogram {
	h := &Histogram{shards: make([][]atomic.Uint64, max(shards, 1))}
	for i := range h.shards {
		h.shards[i] = make([]atomic.Uint64, numBuckets)
	}
	return h
}

// bucket returns the index of v's bucket: values below subBuckets have
// their own; above, each power of two is split into subBuckets.
func bucket(v int64) int {
	if v < subBuckets {
		return int(max(v, 0))
	}
	exp := bits.Len64(uint64(v)) - 1 // 2^exp ≤ v < 2^(exp+1)
	if exp > maxExp {
		return numBuckets - 1
	}
	shift := exp - subBits
	return (shift+1)*subBuckets + int(uint64(v)>>shift) - subBuckets
}

// bucketValue returns the middle of bucket i's range.
func bucketValue(i int) int64 {
	if i < subBuckets {
		return int64(i)
	}
	shift := i/subBuckets - 1
	lo := int64(i%subBuckets+subBuckets) << shift
	return lo + (int64(1)<<shift)/2
}

// Record adds d to shard shard (taken modulo the number of shards).
func (h *Histogram) Record(shard int, d time.Duration) {
	s := h.shards[uint(shard)%uint(len(h.shards))]
	s[bucket(int64(d))].Add(1)
}

// counts returns the counts of every bucket, summed over the shards.
func (h *Histogram) counts() ([]uint64, uint64) {
	c := make([]uint64, numBuckets)
	var total uint64
	for _, s := range h.shards {
		for i := range s {
			n := s[i].Load()
			c[i] += n
			total += n
		}
	}
	return c, total
}

// CountFrom returns the number of values recorded in d's bucket or above:
// those of d or more, within the bucket's width (1/64 of its power of two).
func (h *Histogram) CountFrom(d time.Duration) uint64 {
	c, _ := h.counts()
	var n uint64
	for _, k := range c[bucket(int64(d)):] {
		n += k
	}
	return n
}

// Count returns the number of durations recorded.
func (h *Histogram) Count() uint64 {
	_, n := h.counts()
	return n
}

// Percentile returns the nearest-rank q-quantile (0 < q ≤ 1) of the
// durations recorded, as the middle of its bucket; 0 when none was.
func (h *Histogram) Percentile(q float64) time.Duration {
	return h.Percentiles(q)[0]
}

// Percentiles returns the nearest-rank quantiles qs of the durations
// recorded, like Percentile, in one pass.
func (h *Histogram) Percentiles(qs ...float64) []time.Duration {
	c, total := h.counts()
	out := make([]time.Duration, len(qs))
	if total == 0 {
		return out
	}
	for j, q := range qs {
		rank := uint64(max(1, ceilMul(q, total)))
		var seen uint64
		for i, n := range c {
			seen += n
			if seen >= rank {
				out[j] = time.Duration(bucketValue(i))
				break
			}
		}
	}
	return out
}

// ceilMul returns ⌈q·n⌉, at most n.
func ceilMul(q float64, n uint64) uint64 {
	r := q * float64(n)
	k := uint64(r)
	if float64(k) < r {
		k++
	}
	return min(k, n)
}

// Reset forgets every duration recorded. It must not run concurrently
// with Record.
func (h *Histogram) Reset() {
	for _, s := range h.shards {
		for i := range s {
			s[i].Store(0)
		}
	}
}
