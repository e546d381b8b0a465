package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
)

// TestPlannerRuns: the planner's lateness per window, and what ran on the
// workers at the deadlines it started late (not at those it started on
// time, and never the planner itself).
func TestPlannerRuns(t *testing.T) {
	p := newPlannerRuns()
	p.timer = 1
	p.names = map[uint64]string{1: "BehaviorPlanner", 2: "PointsTransformerFront", 3: "PointsTransformerRear", 4: "Visualizer"}
	ms := func(x float64) int64 { return int64(x * float64(time.Millisecond)) }
	at := func(x float64) time.Time { return p.base.Add(time.Duration(ms(x))) }
	// Cycle 1: both transforms run over the planner's deadline at 101 ms;
	// it starts 1.2 ms late. Cycle 2: the deadline at 201 ms finds a free
	// worker; the planner starts 0.1 ms late while the visualizer runs.
	p.Ran(executor.Run{ID: 2, Start: ms(100.1), End: ms(102.2)})
	p.Ran(executor.Run{ID: 3, Start: ms(100.1), End: ms(102.3)})
	p.Ran(executor.Run{ID: 1, Trigger: at(101), Start: ms(102.2), End: ms(102.4)})
	p.Ran(executor.Run{ID: 4, Start: ms(200.5), End: ms(203)})
	p.Ran(executor.Run{ID: 1, Trigger: at(201), Start: ms(201.1), End: ms(201.3)})

	late := p.late(at(0), at(150))
	require.Len(t, late, 1)
	require.InDelta(t, 1.2, late[0], 1e-6)
	late = p.late(at(150), at(300))
	require.Len(t, late, 1)
	require.InDelta(t, 0.1, late[0], 1e-6)
	require.Equal(t, "PointsTransformerFront 1, PointsTransformerRear 1", p.heldBy())
}

// TestPlannerRunsMachine: the crunches the machine slowed, the planner's
// late starts that one of them held, and the planner's std without those
// cycles.
func TestPlannerRunsMachine(t *testing.T) {
	p := newPlannerRuns()
	p.timer = 1
	ms := func(x float64) int64 { return int64(x * float64(time.Millisecond)) }
	at := func(x float64) time.Time { return p.base.Add(time.Duration(ms(x))) }
	// Five cycles of 100 ms: a crunch of 2.1 ms over the planner's
	// deadline holds it 1.1 ms (1.2 in the last), but in the third a
	// crunch the machine slowed to 4.2 ms holds it 3.2 ms.
	for i, late := range []float64{1.1, 1.1, 3.2, 1.1, 1.2} {
		c := float64(100 * (i + 1))
		p.Ran(executor.Run{ID: 2, Start: ms(c), End: ms(c + 1 + late)})
		p.Ran(executor.Run{ID: 1, Trigger: at(c + 1), Start: ms(c + 1 + late), End: ms(c + 1.2 + late)})
	}
	m := p.machine(at(0), at(600), 2*time.Millisecond)
	require.Equal(t, 5, m.crunches, "the planner's 0.2 ms runs are no crunch")
	require.Equal(t, 1, m.slowed)
	require.Equal(t, 1, m.outliers, "late by 2.1 ms beyond the median; the last only 0.1")
	require.Equal(t, 1, m.heldSlow)
	require.InDelta(t, std([]float64{100, 100.1}), m.steadyStd, 1e-9, "the two periods that touch the third start left out")

	m = p.machine(at(150), at(600), 3*time.Millisecond)
	require.Equal(t, 4, m.crunches, "the four from 200 ms on, each 1.5 ms or longer")
	require.Equal(t, 0, m.slowed, "none of 4.5 ms or more")
	require.Equal(t, 1, m.outliers)
	require.Equal(t, 0, m.heldSlow, "no crunch of 4.5 ms or more")
}

// TestPlannerRunsPhase: the planner's deadline after the last run of a
// root that started at or before it, the median over its runs.
func TestPlannerRunsPhase(t *testing.T) {
	p := newPlannerRuns()
	p.timer = 1
	p.names = map[uint64]string{1: "BehaviorPlanner", 2: "FrontLidarDriver", 3: "RearLidarDriver", 4: "Visualizer"}
	ms := func(x float64) int64 { return int64(x * float64(time.Millisecond)) }
	at := func(x float64) time.Time { return p.base.Add(time.Duration(ms(x))) }
	for i, after := range []float64{7, 7.5, 8} {
		c := float64(100 * (i + 1))
		p.Ran(executor.Run{ID: 2, Start: ms(c), End: ms(c + 0.01)})
		p.Ran(executor.Run{ID: 3, Start: ms(c + 0.02), End: ms(c + 0.03)})
		p.Ran(executor.Run{ID: 4, Start: ms(c + 5), End: ms(c + 5.01)}) // no root
		p.Ran(executor.Run{ID: 1, Trigger: at(c + 0.02 + after), Start: ms(c + 0.02 + after), End: ms(c + 1 + after)})
	}
	require.InDelta(t, 7.5, p.phase([]string{"FrontLidarDriver", "RearLidarDriver"}), 1e-6)
	require.Zero(t, p.phase([]string{"PointCloudMap"}), "no run of a root")
	require.Zero(t, (*plannerRuns)(nil).phase(nil), "not recorded")
}
