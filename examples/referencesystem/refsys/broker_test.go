package refsys_test

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/examples/internal/exampletest"
	"github.com/robotexec/robotexec/examples/referencesystem/refsys"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/internal/syncbuf"
)

// autowareYAML is the config users run.
const autowareYAML = "../autoware.yaml"

// autoware.yaml is refsys.Autoware, which robotexec bench runs: the same
// nodes, in the same order, with the same types and params, and the
// workers pinned.
func TestAutowareConfigIsTheGraph(t *testing.T) {
	file, err := config.Load(autowareYAML)
	require.NoError(t, err)
	graph, err := config.Parse("graph.yaml", []byte(refsys.Autoware.Config()), nil)
	require.NoError(t, err)
	require.True(t, graph.Executor.PinWorkers)
	require.Equal(t, graph.Executor.PinWorkers, file.Executor.PinWorkers)
	require.Len(t, file.Nodes, 24)
	require.Len(t, graph.Nodes, len(file.Nodes))
	for i, n := range file.Nodes {
		g := graph.Nodes[i]
		require.Equal(t, g.Name, n.Name)
		require.Equal(t, g.Type, n.Type, "%s", n.Name)
		var fp, gp map[string]any
		require.NoError(t, n.Params.Decode(&fp))
		require.NoError(t, g.Params.Decode(&gp))
		require.Equal(t, gp, fp, "%s", n.Name)
	}
}

// pubSubs are the publishers and subscribers of each topic of the
// Autoware graph, as the original's requirements test counts them
// (test_requirements.py), with the three topics it leaves out.
var pubSubs = map[string][2]int{
	"FrontLidarDriver": {1, 1}, "RearLidarDriver": {1, 1}, "PointCloudMap": {1, 1}, "Visualizer": {1, 1},
	"Lanelet2Map": {1, 1}, "EuclideanClusterSettings": {1, 1},
	"PointsTransformerFront": {1, 1}, "PointsTransformerRear": {1, 1}, "VoxelGridDownsampler": {1, 1},
	"PointCloudMapLoader": {1, 1}, "RayGroundFilter": {1, 1}, "ObjectCollisionEstimator": {1, 1},
	"MPCController": {1, 1}, "ParkingPlanner": {1, 1}, "LanePlanner": {1, 1},
	"PointCloudFusion": {1, 2}, "NDTLocalizer": {1, 2}, "VehicleInterface": {1, 1},
	"Lanelet2GlobalPlanner": {1, 2}, "Lanelet2MapLoader": {1, 3}, "BehaviorPlanner": {1, 2},
	"EuclideanClusterDetector": {1, 1}, "EuclideanIntersection": {1, 1},
}

// The graph that robotexec run describes on its graph topic.
type graphJSON struct {
	Nodes []struct {
		Name          string `json:"name"`
		Subscriptions []struct {
			Topic    string `json:"topic"`
			Depth    int    `json:"depth"`
			Overflow string `json:"overflow"`
		} `json:"subscriptions"`
		Publications []struct {
			Topic string `json:"topic"`
		} `json:"publications"`
	} `json:"nodes"`
}

// robotexec running autoware.yaml, as the original's requirements test
// runs its executable: its graph topic shows every topic's publishers
// and subscribers, the keep-last queues (depth 1, 10 at the command
// nodes, drop_oldest) whatever the config's defaults; and the command
// nodes log the KPIs, VehicleDBWSystem's with the hot path and the
// planner's period.
func TestAutowareRuns(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{})
	graphs := exampletest.Listen(t, b.URL(), "robotexec/+/graph")
	yaml, err := os.ReadFile(autowareYAML)
	require.NoError(t, err)
	kpis := regexp.MustCompile(`msg=statistics node=VehicleDBWSystem samples=(\d+) .* hot_path_latency_ms.n=\d+ hot_path_latency_ms.min=([0-9.]+) .* behavior_planner_period_ms.n=\d+ behavior_planner_period_ms.min=[0-9.]+ behavior_planner_period_ms.mean=([0-9.]+) `)
	logs := &watch{re: kpis, found: make(chan []byte, 1)}
	// Other defaults for the queues, which the node types override.
	cfg := strings.Replace(string(yaml), "executor:\n", "executor:\n  queue_depth: 5\n  overflow: block\n", 1)
	require.NotEqual(t, string(yaml), cfg)
	app := exampletest.StartApp(t, b.URL(), cfg, logs)

	var g graphJSON
	select {
	case m := <-graphs:
		require.NoError(t, json.Unmarshal(m.Payload, &g))
	case <-time.After(15 * time.Second):
		t.Fatal("no graph within 15s")
	}
	got := map[string][2]int{}
	for _, n := range g.Nodes {
		for _, p := range n.Publications {
			c := got[p.Topic]
			c[0]++
			got[p.Topic] = c
		}
		for _, s := range n.Subscriptions {
			c := got[s.Topic]
			c[1]++
			got[s.Topic] = c
			depth := 1
			if n.Name == "VehicleDBWSystem" || n.Name == "IntersectionOutput" {
				depth = 10
			}
			require.Equal(t, depth, s.Depth, "%s on %s", n.Name, s.Topic)
			require.Equal(t, "drop_oldest", s.Overflow, "%s on %s", n.Name, s.Topic)
		}
	}
	require.Len(t, g.Nodes, 24)
	require.Equal(t, pubSubs, got)

	var line []string
	select {
	case record := <-logs.found:
		line = kpis.FindStringSubmatch(string(record))
	case <-time.After(15 * time.Second):
		t.Fatalf("no KPI line of VehicleDBWSystem within 15s: %s", logs.String())
	}
	exampletest.Stop(t, app)
	hot, err := strconv.ParseFloat(line[2], 64)
	require.NoError(t, err)
	require.Greater(t, hot, 0.0, "the hot path takes four crunches")
	period, err := strconv.ParseFloat(line[3], 64)
	require.NoError(t, err)
	require.Positive(t, period, "the planner's period")
	require.Regexp(t, `msg=statistics node=IntersectionOutput samples=\d+ latency_ms`, logs.String())
}

// watch is a log that hands over the first record that re matches.
type watch struct {
	syncbuf.Buffer
	re    *regexp.Regexp
	found chan []byte
	once  sync.Once
}

func (w *watch) Write(p []byte) (int, error) {
	if w.re.Match(p) {
		w.once.Do(func() { w.found <- bytes.Clone(p) })
	}
	return w.Buffer.Write(p)
}
