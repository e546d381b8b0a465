package refsys_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/examples/referencesystem/refsys"
)

func TestCrunch(t *testing.T) {
	for _, c := range []struct {
		limit uint64
		want  int64
	}{{0, 2}, {2, 2}, {3, 2}, {10, 4}, {100, 25}, {refsys.DefaultCrunch, 564}} {
		require.Equal(t, c.want, refsys.Crunch(c.limit), "limit %d", c.limit)
	}
}

// The wire form is the original's Message4kb: 4,096 bytes, 63 entries
// of 64 bytes; it reads back as written.
func TestMessageWire(t *testing.T) {
	require.Equal(t, 4096, refsys.MessageSize)
	require.Equal(t, 64, refsys.EntrySize)
	var m refsys.Message
	m.Add("FrontLidarDriver", 7, 0, 1_000)
	m.Add("PointsTransformerFront", 3, 2, 2_000)
	m.Data[0] = 564
	b, err := m.MarshalBinary()
	require.NoError(t, err)
	require.Len(t, b, refsys.MessageSize)
	var got refsys.Message
	require.NoError(t, got.UnmarshalBinary(b))
	require.Equal(t, m, got)
	require.Equal(t, "PointsTransformerFront", got.Entries()[1].Name())
	require.Equal(t, uint32(3), got.Sequence())

	require.ErrorContains(t, got.UnmarshalBinary(b[:100]), "refsys: a message has 4096 bytes, not 100")
	b[0] = 64
	require.ErrorContains(t, got.UnmarshalBinary(b), "holds at most 63 entries, not 64")
}

// A history keeps a node's first entry, cuts names to 47 bytes, and
// takes no more than 63 entries.
func TestMessageHistory(t *testing.T) {
	var a, b refsys.Message
	a.Add("Sensor", 1, 0, 10)
	b.Add("Sensor", 2, 0, 20)
	b.Add("Transform", 5, 1, 30)
	a.Merge(&b)
	require.Len(t, a.Entries(), 2)
	require.Equal(t, uint64(10), a.Entries()[0].Stamp, "the first entry of a node is kept")
	require.Equal(t, "Transform", a.Entries()[1].Name())

	long := strings.Repeat("x", 60)
	var c refsys.Message
	c.Add(long, 0, 0, 0)
	require.Equal(t, long[:47], c.Entries()[0].Name())

	var full refsys.Message
	for i := range 70 {
		full.Add(fmt.Sprint("n", i), 0, 0, 0)
	}
	require.Len(t, full.Entries(), refsys.HistoryCapacity)
	full.Merge(&b)
	require.Len(t, full.Entries(), refsys.HistoryCapacity)
}

// message returns a history of the given entries, named and stamped in
// milliseconds.
func message(entries ...entry) *refsys.Message {
	var m refsys.Message
	for _, e := range entries {
		m.Add(e.name, e.seq, e.dropped, uint64(e.ms*float64(time.Millisecond)))
	}
	return &m
}

type entry struct {
	name         string
	seq, dropped uint32
	ms           float64
}

// The KPIs of the original's print_sample_path: the hot path from the
// later root to the sink, its nodes' drops only, the planner's period
// per cycle, the latency from the oldest stamp; none during the warm-up.
func TestKPIs(t *testing.T) {
	k := refsys.KPIs{HotPath: refsys.Autoware.HotPath, Warmup: 1}
	at := func(ms float64) time.Time { return time.Unix(0, int64(ms*float64(time.Millisecond))) }
	path := func(bpSeq uint32, bpMS float64) *refsys.Message {
		return message(
			entry{"FrontLidarDriver", 0, 0, 100},
			entry{"RearLidarDriver", 0, 0, 101},
			entry{"PointsTransformerFront", 0, 1, 102},
			entry{"PointCloudFusion", 0, 2, 105},
			entry{"ObjectCollisionEstimator", 0, 0, 112},
			entry{"NDTLocalizer", 0, 5, 90}, // not on the hot path
			entry{"BehaviorPlanner", bpSeq, 0, bpMS},
		)
	}
	_, ok := k.Add(path(1, 200), at(210))
	require.False(t, ok, "the warm-up")

	s, ok := k.Add(path(2, 300), at(310))
	require.True(t, ok)
	require.Equal(t, refsys.Sample{Latency: 220 * time.Millisecond, HotPath: true, HotPathLatency: 11 * time.Millisecond, HotPathDrops: 3}, s,
		"no planner period yet: the warm-up's message does not count")

	s, ok = k.Add(path(4, 500.5), at(600))
	require.True(t, ok)
	require.True(t, s.Planner)
	require.Equal(t, time.Duration(100.25*float64(time.Millisecond)), s.PlannerPeriod, "two cycles apart")

	s, ok = k.Add(message(entry{"Lanelet2Map", 0, 0, 700}), at(701))
	require.True(t, ok)
	require.Equal(t, refsys.Sample{Latency: time.Millisecond}, s)

	require.Equal(t, 3, k.Latency.N)
	require.Equal(t, 2, k.HotPathLatency.N)
	require.InDelta(t, 11, k.HotPathLatency.Mean, 1e-9)
	require.InDelta(t, 0, k.HotPathLatency.Std(), 1e-9)
	require.Equal(t, 1, k.PlannerPeriod.N)
	require.InDelta(t, 731.0/3, k.Latency.Mean, 1e-9) // 220, 510 and 1 ms
}

// Statistic's standard deviation is the sample's, as the original's.
func TestStatistic(t *testing.T) {
	var s refsys.Statistic
	require.Zero(t, s.Std())
	for _, x := range []float64{2, 4, 4, 4, 5, 5, 7, 9} {
		s.Add(x)
	}
	require.Equal(t, 8, s.N)
	require.Equal(t, 2.0, s.Min)
	require.Equal(t, 9.0, s.Max)
	require.InDelta(t, 5, s.Mean, 1e-12)
	require.InDelta(t, 2.138089935, s.Std(), 1e-9)
}
