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
