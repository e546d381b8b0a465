package bench

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/robotexec/robotexec/examples/referencesystem/refsys"
	"github.com/robotexec/robotexec/executor"
)

// plannerRuns records the runs of a reference run (executor.Options.Runs):
// when BehaviorPlanner's timer callback started against its deadline,
// and what ran on the workers at the deadlines it started late. The
// planner's period varies as its start does: with every worker busy at
// its deadline it starts when the first of them ends.
type plannerRuns struct {
	base  time.Time
	timer uint64            // the planner's timer callback; set before the executor runs
	names map[uint64]string // the callbacks' owners; set before the executor runs

	mu      sync.Mutex
	spans   []runSpan      // every run
	planner []plannerStart // the planner's timer runs
}

// runSpan is a run's callback and its start and end since base.
type runSpan struct {
	id         uint64
	start, end time.Duration
}

// plannerStart is a run of the planner's timer callback: its deadline and
// its start, since base.
type plannerStart struct{ deadline, start time.Duration }

// plannerLateBy is the lateness from which plannerRuns.heldBy counts what
// held the workers: a wake-up takes less.
const plannerLateBy = 300 * time.Microsecond

func newPlannerRuns() *plannerRuns {
	return &plannerRuns{base: time.Now(), names: map[uint64]string{}}
}

// stamp is the executor's Options.Stamp: nanoseconds since p.base.
func (p *plannerRuns) stamp() int64 { return int64(time.Since(p.base)) }

// Ran records r.
func (p *plannerRuns) Ran(r executor.Run) {
	s := runSpan{id: r.ID, start: time.Duration(r.Start), end: time.Duration(r.End)}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spans = append(p.spans, s)
	if r.ID == p.timer {
		p.planner = append(p.planner, plannerStart{deadline: r.Trigger.Sub(p.base), start: s.start})
	}
}

// watch names ex's callbacks and picks the planner's timer; call it
// before ex runs.
func (p *plannerRuns) watch(ex *executor.Executor) {
	for _, cb := range ex.Callbacks() {
		p.names[cb.ID] = cb.Owner
		if cb.Owner == refsys.Planner && cb.Timer != nil {
			p.timer = cb.ID
		}
	}
}

// late returns how late, in ms, the planner's runs that started in
// [from, to) started.
func (p *plannerRuns) late(from, to time.Time) []float64 {
	lo, hi := from.Sub(p.base), to.Sub(p.base)
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []float64
	for _, r := range p.planner {
		if r.start >= lo && r.start < hi {
			out = append(out, ms(r.start-r.deadline))
		}
	}
	return out
}

// heldBy returns, for the planner's runs that started plannerLateBy or
// more after their deadline, the owners of the callbacks that were
// running at the deadline, with counts: "PointsTransformerRear 66, ...".
func (p *plannerRuns) heldBy() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	counts := map[string]int{}
	for _, r := range p.planner {
		if r.start-r.deadline < plannerLateBy {
			continue
		}
		for _, s := range p.spans {
			if s.start <= r.deadline && s.end > r.deadline && s.id != p.timer {
				counts[p.names[s.id]]++
			}
		}
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := names[i], names[j]
		return counts[a] > counts[b] || counts[a] == counts[b] && a < b
	})
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n + " " + strconv.Itoa(counts[n]))
	}
	return b.String()
}

// slowBy is how many times a lone crunch's time a crunching run must
// take for machine to count it slowed: its CPU was shared meanwhile (on
// this VM, at times, by the host: two crunches at once then take twice a
// lone one's time each, for a second or two).
const slowBy = 1.5

// machineWindow is what the runs of a window say of the machine's
// speed, and how much of the planner's spread it explains.
type machineWindow struct {
	crunches, slowed int // crunching runs (lone/2 or longer), and those slowBy·lone or longer
	// outliers counts the planner's starts plannerLateBy or more later
	// than the window's median start; heldSlow those of them at whose
	// deadline a slowed crunch ran.
	outliers, heldSlow int
	// steadyStd is the std of the planner's period, start to start, in
	// ms, the periods that begin or end at a start heldSlow left out;
	// NaN with fewer than two such periods.
	steadyStd float64
}

// machine returns the machineWindow of the runs that started in
// [from, to), lone being a crunch's time alone (the lower bound's).
func (p *plannerRuns) machine(from, to time.Time, lone time.Duration) machineWindow {
	lo, hi := from.Sub(p.base), to.Sub(p.base)
	p.mu.Lock()
	defer p.mu.Unlock()
	var m machineWindow
	slow := time.Duration(float64(lone) * slowBy)
	for _, s := range p.spans {
		if d := s.end - s.start; s.start >= lo && s.start < hi && d >= lone/2 {
			m.crunches++
			if d >= slow {
				m.slowed++
			}
		}
	}
	var starts []plannerStart
	var late []float64
	for _, r := range p.planner {
		if r.start >= lo && r.start < hi {
			starts = append(starts, r)
			late = append(late, ms(r.start-r.deadline))
		}
	}
	if len(late) == 0 {
		m.steadyStd = math.NaN()
		return m
	}
	usual := time.Duration(Median(late)*float64(time.Millisecond)) + plannerLateBy
	held := make([]bool, len(starts))
	for i, r := range starts {
		if r.start-r.deadline < usual {
			continue
		}
		m.outliers++
		held[i] = p.slowAt(r.deadline, slow)
		if held[i] {
			m.heldSlow++
		}
	}
	var periods []float64
	for i := 1; i < len(starts); i++ {
		if !held[i] && !held[i-1] {
			periods = append(periods, ms(starts[i].start-starts[i-1].start))
		}
	}
	m.steadyStd = math.NaN()
	if len(periods) >= 2 {
		m.steadyStd = std(periods)
	}
	return m
}

// slowAt reports whether a run other than the planner's that lasted slow
// or longer was running at t. p.mu must be held.
func (p *plannerRuns) slowAt(t, slow time.Duration) bool {
	for _, s := range p.spans {
		if s.id != p.timer && s.start <= t && s.end > t && s.end-s.start >= slow {
			return true
		}
	}
	return false
}
