package refsys_test

import (
	"os"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/examples/internal/exampletest"
	"github.com/robotexec/robotexec/examples/referencesystem/refsys"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// saturatedYAML is the saturated graph users run.
const saturatedYAML = "../saturated.yaml"

// saturated.yaml is refsys.Saturated, which robotexec bench runs: the
// same nodes, in the same order, with the same types, priorities and
// params, on 2 workers.
func TestSaturatedConfigIsTheGraph(t *testing.T) {
	file, err := config.Load(saturatedYAML)
	require.NoError(t, err)
	require.Equal(t, 2, file.Executor.Workers, "the demand is stated against 2 workers")
	graph, err := config.Parse("graph.yaml", []byte(refsys.Saturated.Config()), nil)
	require.NoError(t, err)
	require.Equal(t, 2, graph.Executor.PriorityWorkers)
	require.Equal(t, graph.Executor.PriorityWorkers, file.Executor.PriorityWorkers)
	require.True(t, graph.Executor.PinWorkers)
	require.Equal(t, graph.Executor.PinWorkers, file.Executor.PinWorkers)
	require.Len(t, file.Nodes, 24)
	require.Len(t, graph.Nodes, len(file.Nodes))
	for i, n := range file.Nodes {
		g := graph.Nodes[i]
		require.Equal(t, g.Name, n.Name)
		require.Equal(t, g.Type, n.Type, "%s", n.Name)
		require.Equal(t, g.Priority, n.Priority, "%s", n.Name)
		var fp, gp map[string]any
		require.NoError(t, n.Params.Decode(&fp))
		require.NoError(t, g.Params.Decode(&gp))
		require.Equal(t, gp, fp, "%s", n.Name)
	}
}

// The priorities of saturated.yaml are the hot path's: every node with a
// priority is on it, every node on it has one, but the intersection,
// whose connection from the path has it and whose other one has none.
func TestSaturatedPrioritiesAreTheHotPath(t *testing.T) {
	file, err := config.Load(saturatedYAML)
	require.NoError(t, err)
	hot := refsys.Saturated.HotPath.Nodes
	var prioritized []string
	for _, n := range file.Nodes {
		if n.Type == refsys.TypeIntersection {
			require.Zero(t, n.Priority, "%s: the priority is its connections'", n.Name)
			var p refsys.IntersectionParams
			require.NoError(t, n.Params.Decode(&p))
			for _, c := range p.Connections {
				if slices.Contains(hot, c.Input) {
					require.Equal(t, 1, c.Priority, "%s: the connection from %s", n.Name, c.Input)
					prioritized = append(prioritized, n.Name)
				} else {
					require.Zero(t, c.Priority, "%s: the connection from %s", n.Name, c.Input)
				}
			}
			continue
		}
		if n.Priority != 0 {
			require.Equal(t, 1, n.Priority, "%s", n.Name)
			prioritized = append(prioritized, n.Name)
		}
	}
	require.ElementsMatch(t, hot, prioritized)
}

// robotexec running saturated.yaml: the graph builds, with its
// priorities, and VehicleDBWSystem logs the hot path's KPIs though the
// CPUs are full.
func TestSaturatedRuns(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{})
	yaml, err := os.ReadFile(saturatedYAML)
	require.NoError(t, err)
	kpis := regexp.MustCompile(`msg=statistics node=VehicleDBWSystem samples=\d+ .* hot_path_latency_ms.n=\d+ hot_path_latency_ms.min=([0-9.]+) `)
	logs := &watch{re: kpis, found: make(chan []byte, 1)}
	app := exampletest.StartApp(t, b.URL(), string(yaml), logs)
	select {
	case <-logs.found:
	case <-time.After(30 * time.Second):
		t.Fatalf("no KPI line of VehicleDBWSystem with the hot path within 30s: %s", logs.String())
	}
	exampletest.Stop(t, app)
}
