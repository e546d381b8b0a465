package bench

import (
	"fmt"
	"slices"
	"time"
)

// referencePlannerAfter is how much later than the nodes before it the
// phase modes build BehaviorPlanner. Its timer's first deadline, on the
// precise source's 1 ms grid, then falls about 7–8 ms after the lidars'
// in each cycle, where the hot path's cluster detector holds one worker
// and a callback off the path falls ready for the other: where
// executor.reserve_for_timers decides whether the planner waits.
const referencePlannerAfter = 5 * time.Millisecond

// referencePhase runs the first row's graph on 2 workers with
// BehaviorPlanner built referencePlannerAfter late, without the reserve
// for timers and with it, windows of window each.
func (s *suite) referencePhase(window time.Duration) (without, with referenceFigures, err error) {
	g := referencePrioritized
	g.ReserveForTimers = false
	without, err = s.referenceModeAfter("2 workers, the planner moved, without the reserve", g, "", 2, window, referencePlannerAfter)
	if err != nil {
		return without, with, err
	}
	with, err = s.referenceModeAfter("2 workers, the planner moved", referencePrioritized, "", 2, window, referencePlannerAfter)
	return without, with, err
}

// addPhase adds the phase modes' figures to m, the planner's metric, and
// says what they are in its note.
func addPhase(m *Metric, without, with referenceFigures) {
	m.Figures = append(m.Figures,
		NewFigure("planner period std, its deadline moved, without the reserve", "ms", without.plannerStd),
		NewFigure("planner period std, its deadline moved, with the reserve", "ms", with.plannerStd))
	m.Note += fmt.Sprintf(" Two more runs of the same graph build BehaviorPlanner %v after the nodes before it, so that its deadline falls %s and %s ms after the lidars' runs (the medians), where the hot path's cluster detector holds one worker and a callback off the path falls ready for the other: the std per window without executor.reserve_for_timers %s ms (the planner's start after its deadline, p90 per window: %s ms), with it %s ms (%s ms).",
		referencePlannerAfter, FormatNumber(without.phase), FormatNumber(with.phase),
		numberList(without.plannerStd), numberList(without.plannerLateP90), numberList(with.plannerStd), numberList(with.plannerLateP90))
}

// phase returns the median, in ms, over the planner's runs of its
// deadline after the last start of a run of roots (the hot path's
// sensors) at or before it; 0 without such runs.
func (p *plannerRuns) phase(roots []string) float64 {
	if p == nil {
		return 0
	}
	ids := map[uint64]bool{}
	for id, name := range p.names {
		if slices.Contains(roots, name) {
			ids[id] = true
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var starts []time.Duration
	for _, s := range p.spans {
		if ids[s.id] {
			starts = append(starts, s.start)
		}
	}
	slices.Sort(starts)
	var out []float64
	for _, r := range p.planner {
		i, _ := slices.BinarySearch(starts, r.deadline+1)
		if i > 0 {
			out = append(out, ms(r.deadline-starts[i-1]))
		}
	}
	if len(out) == 0 {
		return 0
	}
	return Median(out)
}
