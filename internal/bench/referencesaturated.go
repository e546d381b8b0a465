package bench

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"time"

	"github.com/robotexec/robotexec/examples/referencesystem/refsys"
	"github.com/robotexec/robotexec/internal/threadsched"
)

// The saturated reference graph (refsys.Saturated,
// examples/referencesystem/saturated.yaml): the Autoware graph with the
// crunch of its nodes off the hot path raised until they need more CPU
// than 2 workers give. With priority 1 on the hot path and 2 priority
// workers for it, its mean against the lower bound (target of issue 42:
// ≤ 1.3, 0 drops); beside it, the same graph without either.
var (
	specRefSat           = Spec{Name: "reference saturated hot path mean (ms)", Unit: "ms", BaselineName: "lower bound", Target: &Target{Of: "ratio", Op: "<=", Bound: 1.3}}
	specRefSatDrops      = Spec{Name: "reference saturated hot path drops", Unit: "msgs", Target: &Target{Of: "value", Op: "==", Bound: 0}}
	specRefSatPlain      = Spec{Name: "reference saturated hot path mean, no priorities (ms)", Unit: "ms", BaselineName: "lower bound"}
	specRefSatPlainDrops = Spec{Name: "reference saturated hot path drops, no priorities", Unit: "msgs"}
	specRefSatRealtime   = Spec{Name: "reference saturated hot path mean, realtime (ms)", Unit: "ms", BaselineName: "lower bound"}
)

// referenceSaturatedMinWindow is the shortest window of the saturated
// graph's runs: the messages at the sink come at a few a second there,
// the callbacks between the hot path and the sink being those that fall
// behind.
const referenceSaturatedMinWindow = 1500 * time.Millisecond

// The CPU time of a crunch, for the demand, is that of as many crunches
// in a row as take referenceDemandFor, at least referenceDemandOf, over
// their number: the thread's CPU time comes in ticks of a few ms.
const (
	referenceDemandOf  = 3
	referenceDemandFor = 100 * time.Millisecond
)

// referenceSaturated measures the saturated graph on 2 workers, with its
// priorities and priority workers, without, and with them in the
// real-time class where the process may, for s.cfg.Repeat windows of window each, and
// returns its rows; a mode that fails fails its rows only.
func (s *suite) referenceSaturated(window time.Duration) []Metric {
	demand, crunches, err := referenceDemand(refsys.Saturated)
	if err != nil {
		return []Metric{Failed(specRefSat, err), Failed(specRefSatDrops, err), Failed(specRefSatPlain, err), Failed(specRefSatPlainDrops, err), Failed(specRefSatRealtime, err)}
	}
	const workers = 2
	load := fmt.Sprintf("the saturated graph (examples/referencesystem/saturated.yaml: the Autoware graph with the crunch of the 10 nodes off the hot path, and of EuclideanClusterDetector's connection off it, raised to Crunch(%d)) on %d workers behind the embedded broker; at its nominal rates it needs %s cores of crunch, %s times what %d workers give (%s)",
		refsys.SaturatedCrunch, workers, FormatNumber(demand), FormatNumber(demand/workers), workers, crunches)
	var out []Metric
	modes := []struct {
		name        string
		graph       refsys.Graph
		mean, drops Spec
		how         string
	}{
		{"saturated, 2 workers", refsys.Saturated, specRefSat, specRefSatDrops,
			"priority 1 on the hot path's nodes (EuclideanClusterDetector's: on its connection from RayGroundFilter), and 2 priority workers beside the 2 workers (executor.priority_workers), which run those callbacks only, the 2 workers' threads at nice 10; every worker's thread pinned to a CPU (executor.pin_workers), as in every reference mode but one"},
		{"saturated, 2 workers, no priorities", refsys.Autoware.Saturate(refsys.SaturatedCrunch), specRefSatPlain, specRefSatPlainDrops,
			"without priorities (saturated.yaml without its priority keys and priority workers): the callbacks served in the order they became ready, after the due timers"},
		{"saturated, realtime", refsys.Saturated.WithRealtime(), specRefSatRealtime, Spec{},
			"as the first row, with executor.realtime: the priority workers' threads in Linux's SCHED_FIFO class"},
	}
	for _, c := range modes {
		if c.graph.Realtime {
			if err := threadsched.RealtimePermitted(); err != nil {
				out = append(out, NotMeasured(c.mean, "run as root, or with an RLIMIT_RTPRIO of 1 or more, for executor.realtime"))
				continue
			}
		}
		f, err := s.referenceMode(c.name, c.graph, "", workers, window)
		if err != nil {
			out = append(out, Failed(c.mean, err))
			if c.drops.Name != "" {
				out = append(out, Failed(c.drops, err))
			}
			continue
		}
		mean := f.headline(c.mean, f.mean)
		mean.Figures = append(mean.Figures, NewFigure("cpu demand", "cores", []float64{demand}))
		mean.Note = fmt.Sprintf("%s; %s; the lower bound and the samples as for the 2-worker row, %d windows of %v, %d hot-path samples in all; figures: %s.",
			load, c.how, len(f.mean), f.windowLength.Round(time.Millisecond), f.samples, figureList(mean))
		out = append(out, mean)
		if c.drops.Name != "" {
			drops := NewMetric(c.drops, f.drops, nil)
			drops.Note = "the hot-path nodes' missed samples at the sink, per window, " + c.how + "."
			out = append(out, drops)
		}
	}
	return out
}

// referenceDemand returns the CPU that g's crunch needs at its nominal
// rates (refsys.Graph.Demand), in cores: each crunch limit's crunches a
// second times the CPU time of one crunch, measured on the bench's thread
// (its time where the thread's CPU time cannot be read); and the sum
// spelled out.
func referenceDemand(g refsys.Graph) (cores float64, sum string, err error) {
	rates, err := g.Demand()
	if err != nil {
		return 0, "", err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var sink int64
	for _, limit := range slices.Sorted(maps.Keys(rates)) {
		began := time.Now()
		c0, ok0 := threadCPU()
		n := 0
		for ; n < referenceDemandOf || time.Since(began) < referenceDemandFor; n++ {
			sink += refsys.Crunch(limit)
		}
		c1, ok1 := threadCPU()
		each := (c1 - c0) / time.Duration(n)
		if !ok0 || !ok1 {
			each = time.Since(began) / time.Duration(n)
		}
		cores += rates[limit] * each.Seconds()
		if sum != "" {
			sum += " + "
		}
		sum += fmt.Sprintf("%s/s of Crunch(%d), %s ms of CPU each", FormatNumber(rates[limit]), limit, FormatNumber(ms(each)))
	}
	runtime.KeepAlive(sink)
	return cores, sum, nil
}
