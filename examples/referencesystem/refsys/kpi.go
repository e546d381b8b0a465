package refsys

import (
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"
)

// Statistic is the running minimum, maximum, mean and standard deviation
// of a series (Welford's algorithm, as the original's statistic_value_t).
// The zero value is an empty series.
type Statistic struct {
	// N is the number of values added.
	N int
	// Min, Max and Mean are those of the values added; 0 while N is 0.
	Min, Max, Mean float64
	m2             float64
}

// Add adds x to the series.
func (s *Statistic) Add(x float64) {
	s.N++
	if s.N == 1 {
		s.Min, s.Max = x, x
	}
	s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	d := x - s.Mean
	s.Mean += d / float64(s.N)
	s.m2 += d * (x - s.Mean)
}

// Std returns the sample standard deviation (divided by N-1, as the
// original's); 0 below two values.
func (s *Statistic) Std() float64 {
	if s.N < 2 {
		return 0
	}
	return math.Sqrt(s.m2 / float64(s.N-1))
}

// attr returns s as a log attribute group named name: n, min, mean, max
// and std, rounded to the microsecond where s is in milliseconds.
func (s *Statistic) attr(name string) slog.Attr {
	r := func(x float64) float64 { return math.Round(x*1000) / 1000 }
	return slog.Group(name, "n", s.N, "min", r(s.Min), "mean", r(s.Mean), "max", r(s.Max), "std", r(s.Std()))
}

// HotPath names the nodes of a graph's hot path: the latency runs from
// the latest of its roots' stamps to its sink's stamp, and its drops are
// those its nodes saw.
type HotPath struct {
	// Roots are the sensors the path starts from.
	Roots []string
	// Sink is the node whose stamp ends the path: the start of its
	// callback, so its own crunch is not counted.
	Sink string
	// Nodes are all the path's nodes, roots and sink included.
	Nodes []string
}

// String names the path as the original prints it: "A/B -> Sink".
func (h HotPath) String() string { return strings.Join(h.Roots, "/") + " -> " + h.Sink }

// Planner is the node whose period the KPIs follow: the Autoware graph's
// behavior planner.
const Planner = "BehaviorPlanner"

// Sample is what one message at a command node tells.
type Sample struct {
	// Latency is the time from the oldest stamp of the message's history
	// to its arrival at the command node.
	Latency time.Duration
	// HotPath reports whether the message passed the hot path's sink;
	// HotPathLatency and HotPathDrops are set only then.
	HotPath        bool
	HotPathLatency time.Duration
	// HotPathDrops is the sum of the samples the hot path's nodes found
	// missing in their inputs.
	HotPathDrops uint64
	// Planner reports whether PlannerPeriod is set: the message carries
	// an entry of the Planner, and an earlier one did too.
	Planner bool
	// PlannerPeriod is the time between the Planner's entry in this
	// message and in the previous one that had one, per cycle between
	// them.
	PlannerPeriod time.Duration
}

// KPIs computes what a command node reports, as the original's
// print_sample_path: for each message after the warm-up, the Sample, and
// the statistics over the samples, in milliseconds (drops in samples).
type KPIs struct {
	// HotPath is the graph's hot path.
	HotPath HotPath
	// Warmup is the number of messages skipped before the first sample.
	Warmup int

	// Latency, HotPathLatency, HotPathDrops and PlannerPeriod are the
	// statistics of the samples' fields.
	Latency, HotPathLatency, HotPathDrops, PlannerPeriod Statistic

	calls        int
	plannerSeq   uint32
	plannerStamp uint64
}

// Add takes a message that arrived at now: its sample and true, or false
// during the warm-up and for a message with an empty history.
func (k *KPIs) Add(m *Message, now time.Time) (Sample, bool) {
	k.calls++
	if k.calls <= k.Warmup || m.Size == 0 {
		return Sample{}, false
	}
	var s Sample
	oldest := uint64(math.MaxUint64)
	var root, sink uint64
	for i := range m.Entries() {
		e := &m.History[i]
		oldest = min(oldest, e.Stamp)
		switch name := e.Name(); {
		case name == k.HotPath.Sink:
			sink, s.HotPath = e.Stamp, true
		case slices.Contains(k.HotPath.Roots, name):
			root = max(root, e.Stamp)
		case name == Planner:
			s.PlannerPeriod, s.Planner = k.planner(e)
		}
	}
	s.Latency = time.Duration(now.UnixNano() - int64(oldest))
	k.Latency.Add(ms(s.Latency))
	if s.HotPath {
		s.HotPathLatency = time.Duration(int64(sink) - int64(root))
		for _, e := range m.Entries() {
			if slices.Contains(k.HotPath.Nodes, e.Name()) {
				s.HotPathDrops += uint64(e.Dropped)
			}
		}
		k.HotPathLatency.Add(ms(s.HotPathLatency))
		k.HotPathDrops.Add(float64(s.HotPathDrops))
	}
	if s.Planner {
		k.PlannerPeriod.Add(ms(s.PlannerPeriod))
	}
	return s, true
}

// planner returns the Planner's period per cycle since its previous
// entry, and records e as the previous one.
func (k *KPIs) planner(e *Entry) (time.Duration, bool) {
	prevSeq, prevStamp := k.plannerSeq, k.plannerStamp
	k.plannerSeq, k.plannerStamp = e.Sequence, e.Stamp
	if prevStamp == 0 || e.Sequence <= prevSeq {
		return 0, false
	}
	return time.Duration(int64(e.Stamp-prevStamp) / int64(e.Sequence-prevSeq)), true
}

// Attrs returns the statistics as the command node logs them: the
// number of samples, the latency, and the hot path's and the planner's
// when there were samples of them.
func (k *KPIs) Attrs() []any {
	attrs := []any{"samples", k.Latency.N, k.Latency.attr("latency_ms")}
	if k.HotPathLatency.N > 0 {
		attrs = append(attrs, "hot_path", k.HotPath.String(), k.HotPathLatency.attr("hot_path_latency_ms"), k.HotPathDrops.attr("hot_path_drops"))
	}
	if k.PlannerPeriod.N > 0 {
		attrs = append(attrs, k.PlannerPeriod.attr("behavior_planner_period_ms"))
	}
	return attrs
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
