package graph_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/graph"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"

	// The node types of the example configs.
	_ "github.com/robotexec/robotexec/examples/imufilter"
	_ "github.com/robotexec/robotexec/examples/pipeline"
	_ "github.com/robotexec/robotexec/examples/simsensor"
	_ "github.com/robotexec/robotexec/nodes/builtin"
)

// built is a config's nodes, built as robotexec run builds them, on an
// executor that never runs.
type built struct {
	ex    *executor.Executor
	nodes []*nodes.Node
}

func build(t *testing.T, path string) built {
	t.Helper()
	cfg, err := app.LoadAndCheck(path)
	require.NoError(t, err)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ex := executor.New(executor.Options{Workers: 1, Clock: timers.NewSim(time.Now()), Logger: quiet})
	env := app.NodeEnv(cfg, ex, new(subscribers.Router), quiet)
	b := built{ex: ex}
	for _, n := range cfg.Nodes {
		node, err := app.BuildNode(context.Background(), env, n)
		require.NoError(t, err)
		b.nodes = append(b.nodes, node)
	}
	return b
}

func (b built) graph() graph.Graph {
	return graph.Build(graph.Graph{ClientID: "robot-1", Version: "v1.2.3"}, b.nodes, b.ex.Callbacks())
}

func names(g graph.Graph) []string {
	var out []string
	for _, n := range g.Nodes {
		out = append(out, n.Name)
	}
	return out
}

func node(t *testing.T, g graph.Graph, name string) graph.Node {
	t.Helper()
	for _, n := range g.Nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no node %s in %v", name, names(g))
	return graph.Node{}
}

func TestTopic(t *testing.T) {
	require.Equal(t, "robotexec/robot-1/graph", graph.Topic("robot-1"))
}

// The demo config: nodes by name, each with the callbacks it registered,
// their queues, timers and groups, and the topics it publishes on.
func TestBuildTheDemoConfig(t *testing.T) {
	g := build(t, "../../examples/config.yaml").graph()
	require.Equal(t, "robot-1", g.ClientID)
	require.Equal(t, "v1.2.3", g.Version)
	require.Equal(t, []string{"heartbeat", "imu0", "imu_filter", "odom", "sensor_bridge", "sensor_watchdog"}, names(g))

	require.Equal(t, graph.Node{Name: "imu_filter", Type: "imu_filter",
		Subscriptions: []graph.Subscription{{Topic: "robot/imu0/data", Depth: 10, Overflow: "drop_oldest",
			Callback: "robot/imu0/data", Group: "imu_filter"}},
		Publications: []graph.Publication{{Topic: "robot/imu0/filtered"}},
		Timers: []graph.Timer{{Period: "100ms", Callback: "timer(100ms)", Group: "imu_filter"},
			{Period: "1s", Callback: "timer(1s)", Group: "imu_filter"}},
	}, node(t, g, "imu_filter"))

	require.Equal(t, graph.Node{Name: "sensor_watchdog", Type: "watchdog",
		Subscriptions: []graph.Subscription{{Topic: "robot/+/data", Depth: 10, Overflow: "drop_oldest",
			Callback: "watch", Group: "sensor_watchdog"}},
		Publications: []graph.Publication{{Topic: "robot/alarm"}},
		Timers:       []graph.Timer{{Period: "500ms", OneShot: true, Callback: "timeout", Group: "sensor_watchdog"}},
	}, node(t, g, "sensor_watchdog"))

	bridge := node(t, g, "sensor_bridge")
	require.Equal(t, []graph.Publication{{Topic: "robot/+/data"}}, bridge.Publications, "a filter for topics known at run time")
	require.Empty(t, bridge.Timers)
	require.NotNil(t, bridge.Timers, "empty lists are [] in JSON, not null")
}

// The pipeline config: a block policy, and a node that publishes nothing.
func TestBuildThePipelineConfig(t *testing.T) {
	g := build(t, "../../examples/pipeline.yaml").graph()
	require.Equal(t, []string{"sink", "source", "stage1", "stage2", "stage3", "stage4", "stage5"}, names(g))
	sink := node(t, g, "sink")
	require.Equal(t, []graph.Subscription{{Topic: "pipeline/5", Depth: 10, Overflow: "block", Callback: "sink", Group: "sink"}},
		sink.Subscriptions)
	require.Equal(t, []graph.Publication{}, sink.Publications)
	require.Equal(t, []graph.Timer{{Period: "1s", Callback: "report", Group: "sink"}}, sink.Timers)
	require.Equal(t, []graph.Publication{{Topic: "pipeline/3"}}, node(t, g, "stage3").Publications)
}

// Nodes sharing a group name it; callbacks of owners that are not nodes
// are left out; the JSON has the graph topic's keys (docs/observability.md,
// Seeing what runs).
func TestBuildSharedGroupAndJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "robot.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
executor: { queue_depth: 3, overflow: drop_newest }
nodes:
  - { name: zeta, type: heartbeat, group: sensors, params: { topic: z, period: 2s } }
  - { name: alpha, type: heartbeat, group: sensors, params: { topic: a, period: 1s } }
  - { name: mid, type: bridge, params: { from: in/#, to: out/# } }
`), 0o644))
	b := build(t, path)
	_, err := b.ex.NewOwner("observer", nil).Subscribe(new(subscribers.Router), "a", func(ctx context.Context, _ subscribers.Message) {})
	require.NoError(t, err)

	g := b.graph()
	require.Equal(t, []string{"alpha", "mid", "zeta"}, names(g))
	alpha := node(t, g, "alpha")
	require.Equal(t, "sensors", alpha.Group)
	require.Equal(t, []graph.Timer{{Period: "1s", Callback: "beat", Group: "sensors"}}, alpha.Timers)
	require.Equal(t, "sensors", node(t, g, "zeta").Timers[0].Group)
	mid := node(t, g, "mid")
	require.Equal(t, "", mid.Group)
	require.Equal(t, []graph.Subscription{{Topic: "in/#", Depth: 3, Overflow: "drop_newest", Callback: "bridge", Group: "mid"}},
		mid.Subscriptions)

	js, err := json.Marshal(g)
	require.NoError(t, err)
	var doc struct {
		ClientID string           `json:"client_id"`
		Started  string           `json:"started"`
		Nodes    []map[string]any `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal(js, &doc))
	require.Equal(t, "robot-1", doc.ClientID)
	require.NotContains(t, string(js), `"metrics"`, "no metrics URL: the key is left out")
	require.NotContains(t, string(js), `"one_shot"`, "no one-shot timer: the key is left out")
	require.Len(t, doc.Nodes, 3)
	for _, n := range doc.Nodes {
		require.ElementsMatch(t, []string{"name", "type", "group", "subscriptions", "publications", "timers"}, keys(n))
	}
	require.JSONEq(t, `[{"period":"2s","callback":"beat","group":"sensors"}]`, marshal(t, doc.Nodes[2]["timers"]))
}

// No nodes: an empty list.
func TestBuildNoNodes(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 1})
	g := graph.Build(graph.Graph{ClientID: "c"}, nil, ex.Callbacks())
	js, err := json.Marshal(g)
	require.NoError(t, err)
	require.Contains(t, string(js), `"nodes":[]`)
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
