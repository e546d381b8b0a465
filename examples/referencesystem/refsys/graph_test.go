package refsys_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/examples/referencesystem/refsys"
	"github.com/robotexec/robotexec/internal/config"
)

// WithCrunch sets the crunch of every crunching node, each connection of
// an intersection's included, and leaves sensors and commands alone.
func TestWithCrunch(t *testing.T) {
	cfg, err := config.Parse("graph.yaml", []byte(refsys.Autoware.WithCrunch(7).Config()), nil)
	require.NoError(t, err)
	require.Len(t, cfg.Nodes, len(refsys.Autoware.Nodes))
	crunching := 0
	for _, n := range cfg.Nodes {
		var p map[string]any
		require.NoError(t, n.Params.Decode(&p))
		if n.Type == refsys.TypeSensor || n.Type == refsys.TypeCommand {
			require.NotContains(t, p, "crunch", "%s", n.Name)
			continue
		}
		crunching++
		require.Equal(t, 7, p["crunch"], "%s", n.Name)
	}
	require.Equal(t, 16, crunching)
	require.NotContains(t, refsys.Autoware.Config(), "crunch", "Autoware is left as it is")
}

// Saturated is Autoware with the crunch raised off the hot path and
// priority 1 on it: the same nodes and types; the crunching nodes off the
// path at SaturatedCrunch, those on it at the default; the priorities
// those of the path's nodes, EuclideanClusterDetector's on its connection
// from RayGroundFilter, whose other connection crunches more.
func TestSaturated(t *testing.T) {
	sat, err := config.Parse("saturated.yaml", []byte(refsys.Saturated.Config()), nil)
	require.NoError(t, err)
	require.Len(t, sat.Nodes, len(refsys.Autoware.Nodes))
	hot := refsys.Saturated.HotPath.Nodes
	require.Equal(t, refsys.Autoware.HotPath, refsys.Saturated.HotPath)
	for i, n := range sat.Nodes {
		a := refsys.Autoware.Nodes[i]
		require.Equal(t, a.Name, n.Name)
		require.Equal(t, a.Type, n.Type, "%s", n.Name)
		var p map[string]any
		require.NoError(t, n.Params.Decode(&p))
		onPath := slices.Contains(hot, n.Name)
		switch {
		case n.Type == refsys.TypeIntersection:
			require.Zero(t, n.Priority, "%s: the priority is its connection's", n.Name)
			require.Equal(t, []any{
				map[string]any{"input": "RayGroundFilter", "output": "EuclideanClusterDetector", "priority": 1},
				map[string]any{"input": "EuclideanClusterSettings", "output": "EuclideanIntersection", "crunch": refsys.SaturatedCrunch},
			}, p["connections"])
			require.NotContains(t, p, "crunch")
		case onPath:
			require.Equal(t, 1, n.Priority, "%s", n.Name)
			require.NotContains(t, p, "crunch", "%s: the hot path keeps its crunch", n.Name)
		case n.Type == refsys.TypeSensor || n.Type == refsys.TypeCommand:
			require.Zero(t, n.Priority, "%s", n.Name)
			require.NotContains(t, p, "crunch", "%s", n.Name)
		default:
			require.Zero(t, n.Priority, "%s", n.Name)
			require.Equal(t, refsys.SaturatedCrunch, p["crunch"], "%s", n.Name)
		}
	}
	plain := refsys.Autoware.Saturate(refsys.SaturatedCrunch)
	require.Empty(t, plain.Priorities)
	require.NotContains(t, plain.Config(), "priority", "Saturate sets no priority")
	require.Equal(t, 2, sat.Executor.PriorityWorkers, "two priority workers run the hot path")
	require.Zero(t, plain.PriorityWorkers)
	require.Equal(t, strings.ReplaceAll(refsys.Saturated.WithPriorityWorkers(0).Config(), ", priority: 1", ""), plain.Config(),
		"without priorities, the same graph")
	require.Empty(t, refsys.Autoware.Priorities, "Autoware is left as it is")
	require.NotContains(t, refsys.Autoware.Config(), "crunch")
}

// Demand counts the crunches a second at the nominal rates: 190 in the
// Autoware graph, 60 of them on the hot path (two transformers,
// PointCloudFusion, RayGroundFilter, EuclideanClusterDetector's
// connection and ObjectCollisionEstimator at 10 Hz), which the saturated
// graph leaves at the default crunch.
func TestDemand(t *testing.T) {
	d, err := refsys.Autoware.Demand()
	require.NoError(t, err)
	require.Len(t, d, 1)
	require.InDelta(t, 190, d[refsys.DefaultCrunch], 1e-9)

	d, err = refsys.Saturated.Demand()
	require.NoError(t, err)
	require.Len(t, d, 2)
	require.InDelta(t, 60, d[refsys.DefaultCrunch], 1e-9)
	require.InDelta(t, 130, d[refsys.SaturatedCrunch], 1e-9)

	// A fusion crunches as often as its slower input; a cyclic node once
	// a period, whatever its inputs.
	g := refsys.Graph{Nodes: []refsys.Node{
		{Name: "A", Type: refsys.TypeSensor, Params: "{ period: 10ms }"},
		{Name: "B", Type: refsys.TypeSensor, Params: "{ topic: b, period: 50ms }"},
		{Name: "F", Type: refsys.TypeFusion, Params: "{ inputs: [A, b], crunch: 7 }"},
		{Name: "T", Type: refsys.TypeTransform, Params: "{ input: F, output: t }"},
		{Name: "P", Type: refsys.TypeCyclic, Params: "{ inputs: [t], period: 1s, crunch: 7 }"},
		{Name: "X", Type: refsys.TypeTransform, Params: "{ input: nobody }"},
	}}
	d, err = g.Demand()
	require.NoError(t, err)
	require.Equal(t, map[uint64]float64{7: 21, refsys.DefaultCrunch: 20}, d)

	_, err = refsys.Graph{Nodes: []refsys.Node{{Name: "A", Type: refsys.TypeSensor, Params: "{ period: 10ms, speed: 3 }"}}}.Demand()
	require.ErrorContains(t, err, "refsys: A: params")
}

// WithLinger's config sets mqtt.linger, which robotexec run reads.
func TestWithLinger(t *testing.T) {
	cfg, err := config.Parse("graph.yaml", []byte(refsys.Autoware.WithLinger(5*time.Millisecond).Config()), nil)
	require.NoError(t, err)
	require.Equal(t, 5*time.Millisecond, cfg.MQTT.Linger)
	require.Len(t, cfg.Nodes, len(refsys.Autoware.Nodes))
	require.NotContains(t, refsys.Autoware.Config(), "mqtt", "Autoware is left as it is")
}
