package robotexec_test

// End-to-end tests of the live view: robotexec run of the demo with
// view.listen, watched and driven by the reference client of the Foxglove
// WebSocket protocol (FoxgloveClient of @foxglove/ws-protocol, under Node).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/npmci"
)

// foxglovejsDir is the directory of the reference client and its script.
const foxglovejsDir = "internal/view/testdata/foxglovejs"

// viewClientRun is what client.mjs prints.
type viewClientRun struct {
	ServerInfo struct {
		Name               string
		Capabilities       []string
		SupportedEncodings []string
	}
	Channels []struct {
		ID                          int
		Topic, Encoding, SchemaName string
		Schema                      string
	}
	Statuses []json.RawMessage
	Window   struct {
		Received, Parsed        int
		FirstNs, LastNs, WallNs string
		Ordered                 bool
	}
	Probe, Seen, Error string
	// Params are the answers to getParameters and setParameters, and the
	// status that refused the set.
	Params struct {
		Got, AfterSet []viewParam
		Refusal       string
	}
	// Graph is the connection graph as the updates left it: topic → IDs.
	Graph struct {
		Published, Subscribed map[string][]string
		Updates               int
	}
}

// viewParam is a parameter as client.mjs prints it.
type viewParam struct {
	Name  string
	Value any
}

// TestViewFoxgloveClient: robotexec run of the demo with view.listen
// serves the Foxglove WebSocket protocol to its reference client: every
// topic of the demo is advertised (JSON, with a schema), the 100 Hz IMU
// topic streams at its rate with receive times in nanoseconds, and a
// message the client publishes on a topic that the demo's bridge
// subscribes comes back on the bridge's output. The connection graph has
// the demo's nodes and those of another instance on its broker; the
// nodes' params are parameters, read-only. The metrics count the viewer's
// drops.
func TestViewFoxgloveClient(t *testing.T) {
	t.Parallel()
	node := npmci.Node(t, foxglovejsDir, "the Foxglove WebSocket reference client", "@foxglove/ws-protocol")
	viewPort, metricsPort, demoPort := freePort(t), freePort(t), freePort(t)
	cfg := configOnPort(t, "examples/config.yaml", demoPort)
	data, err := os.ReadFile(cfg)
	require.NoError(t, err)
	// The client publishes without credentials.
	writeFile(t, cfg, string(data)+fmt.Sprintf("\nview:\n  listen: 127.0.0.1:%d\n  anonymous_publish: true\nmetrics:\n  listen: 127.0.0.1:%d\n", viewPort, metricsPort))
	run := startRun(t, robotexecBin, cfg)
	run.stderr.waitFor(t, startup, "serving the live view")
	peer := startPipeline(t, pipelineOptions{broker: brokerURL(demoPort), clientID: "view-peer",
		nodes: "  - { name: peer_beat, type: heartbeat, params: { topic: peer/hb, period: 1s } }\n"})

	got := runViewClient(t, node, viewPort, demoPlan(`"graph":[{"node":"imu0","topic":"sensors/imu0/raw"},{"node":"peer_beat","topic":"peer/hb"}],`+
		`"params":{"get":["/imu0/rate","/sensor_bridge/from","/imu_filter/alpha","/nope"],"set":"/imu0/rate"}`))
	require.Contains(t, got.ServerInfo.Capabilities, "clientPublish")
	require.Contains(t, got.ServerInfo.Capabilities, "connectionGraph")
	require.Contains(t, got.ServerInfo.Capabilities, "parameters")
	require.Equal(t, []viewParam{{"/imu0/rate", 100.0}, {"/sensor_bridge/from", "sensors/+/raw"}, {"/imu_filter/alpha", 0.1}}, got.Params.Got)
	require.Equal(t, []viewParam{{"/imu0/rate", 100.0}}, got.Params.AfterSet, "read-only: the value is the config's")
	require.Contains(t, got.Params.Refusal, "read-only")
	requireDemoGraph(t, got)
	require.Equal(t, []string{"peer_beat@view-peer"}, got.Graph.Published["peer/hb"])
	peer.signal(t, os.Interrupt)
	require.Equal(t, 0, peer.wait(t, stopWithin), "%s", peer)
	require.Equal(t, []string{"json"}, got.ServerInfo.SupportedEncodings)
	topics := map[string]string{}
	for _, c := range got.Channels {
		if strings.HasSuffix(c.Topic, "/status") { // "online", not JSON
			require.Equal(t, "application/octet-stream", c.Encoding, "%s", c.Topic)
			continue
		}
		require.Equal(t, "json", c.Encoding, "%s", c.Topic)
		if c.Schema != "" || topics[c.Topic] == "" { // a channel the graph named first has none
			if c.Schema != "" {
				require.Equal(t, "jsonschema", schemaEncodingOf(t, c.Schema), "%s", c.Topic)
			}
			topics[c.Topic] = c.Schema
		}
	}
	for _, topic := range []string{"sensors/imu0/raw", "robot/imu0/data", "sensors/odom/raw", "robot/odom/data", "robot/imu0/filtered", "robot/heartbeat", "robot/view/data"} {
		require.Contains(t, topics, topic, "advertised: %v", got.Channels)
	}
	require.Contains(t, topics["robot/imu0/data"], `"ax":{"type":"number"}`)
	requireDemoStream(t, got)

	metrics := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	require.Contains(t, metrics, `robotexec_view_dropped_total{connection="closed",remote=""} 0`)
	require.Contains(t, metrics, "robotexec_view_connections 0")

	run.signal(t, os.Interrupt)
	require.Equal(t, 0, run.wait(t, stopWithin), "%s", run)
}

// demoPlan is what client.mjs does against the demo: it watches the IMU
// topic for 1 s, then publishes on a topic that the demo's bridge passes
// on; extra are more fields of the plan (graph, params).
func demoPlan(extra string) string {
	return `{"subscribe":"robot/imu0/data","windowMs":1000,"publish":"sensors/view/raw","expect":"robot/view/data",` +
		extra + `,"timeoutMs":30000}`
}

// requireDemoGraph checks the demo's nodes in the connection graph that
// client.mjs saw: publishers and subscribers, the nodes on topic filters
// shown on the topics the filters match.
func requireDemoGraph(t *testing.T, got viewClientRun) {
	t.Helper()
	g := got.Graph
	require.Positive(t, g.Updates)
	these := func(ids []string, nodes ...string) {
		t.Helper()
		require.Len(t, ids, len(nodes), "%v", g)
		for i, node := range nodes {
			require.True(t, strings.HasPrefix(ids[i], node+"@"), "%v", g)
		}
	}
	these(g.Published["sensors/imu0/raw"], "imu0")
	these(g.Published["robot/heartbeat"], "heartbeat")
	// The bridge's and the watchdog's filters are joined with the topics.
	these(g.Published["robot/imu0/data"], "sensor_bridge")
	these(g.Subscribed["sensors/imu0/raw"], "sensor_bridge")
	these(g.Subscribed["robot/imu0/data"], "imu_filter", "sensor_watchdog")
	require.NotContains(t, g.Subscribed, "sensors/+/raw", "a filter that matched topics")
}

// runViewClient runs client.mjs with plan against the live view on port
// and returns what it saw; the run must end without an error or a status
// of the server.
func runViewClient(t *testing.T, node string, port int, plan string) viewClientRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(foxglovejsDir, "client.mjs"), fmt.Sprintf("ws://127.0.0.1:%d/", port), plan)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var got viewClientRun
	require.NoError(t, json.Unmarshal(out, &got), "client.mjs printed %q; stderr: %s", out, stderr.String())
	require.NoError(t, err, "client.mjs: %s; stderr: %s", out, stderr.String())
	require.Empty(t, got.Error)
	require.Empty(t, got.Statuses, "the server reported problems")
	return got
}

// requireDemoStream checks what client.mjs saw of demoPlan: the 100 Hz
// IMU topic streamed at its rate with receive times in nanoseconds, and
// its publication came back through the demo's bridge.
func requireDemoStream(t *testing.T, got viewClientRun) {
	t.Helper()
	w := got.Window
	// At its rate, less the periods a loaded machine makes the timer skip
	// (a CI run once held a 10 ms heartbeat to 60 Hz over half a second):
	// at least half of it, where a stream throttled or batched gives far
	// fewer.
	require.GreaterOrEqual(t, w.Parsed, 50, "robot/imu0/data (100 Hz) in 1 s")
	require.Equal(t, w.Received, w.Parsed, "every message is a JSON object")
	require.True(t, w.Ordered, "receive times go forward")
	first, last, wall := ns(t, w.FirstNs), ns(t, w.LastNs), ns(t, w.WallNs)
	require.InDelta(t, 1e9, float64(last-first), 0.5e9, "the receive times of 1 s of messages")
	require.InDelta(t, float64(wall), float64(last), 5e9, "receive times are Unix nanoseconds")

	require.NotEmpty(t, got.Probe)
	require.Equal(t, got.Probe, got.Seen, "the bridge passed the client's publication on")
}

// schemaEncodingOf returns "jsonschema" when s is a JSON Schema of an
// object.
func schemaEncodingOf(t *testing.T, s string) string {
	t.Helper()
	var v struct{ Type string }
	require.NoError(t, json.Unmarshal([]byte(s), &v), "schema %q", s)
	if v.Type == "object" {
		return "jsonschema"
	}
	return ""
}

func ns(t *testing.T, s string) int64 {
	t.Helper()
	n, ok := new(big.Int).SetString(s, 10)
	require.True(t, ok && n.IsInt64(), "%q is not a time in nanoseconds", s)
	return n.Int64()
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	c := http.Client{Timeout: quickExit}
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	return string(b)
}

// TestValidateView: a live view on a network address with no users is a
// config error with its line unless allow_anonymous is true.
func TestValidateView(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, config, want string
		code               int
	}{
		{"open", "view:\n  listen: 0.0.0.0:8765\n", `open.yaml:2: view.listen: "0.0.0.0:8765" is reachable from the network: name who may connect in view.users, or set allow_anonymous: true to let anyone in`, 2},
		{"anonymous", "view:\n  listen: 0.0.0.0:8765\n  allow_anonymous: true\n", "anonymous.yaml: valid, 0 nodes", 0},
		{"users", "view:\n  listen: 0.0.0.0:8765\n  users: [{username: ops, password: pw, read: ['#']}]\n", "users.yaml: valid, 0 nodes", 0},
	} {
		path := filepath.Join(dir, tc.name+".yaml")
		writeFile(t, path, tc.config)
		r := runCmd(t, quickExit, robotexecBin, nil, "validate", path)
		require.Equal(t, tc.code, r.code, "%s", r)
		require.Contains(t, r.stdout+r.stderr, tc.want, "%s", r)
	}
}
