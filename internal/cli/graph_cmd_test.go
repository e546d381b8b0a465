package cli

// Tests of node list, node info and topic list on a broker with two
// robotexec instances, and instances a paho client describes with
// retained graph and status messages: three online whose metrics cannot
// be read (no server, not the text format, 404), one killed (offline, its
// graph stale), one online with no graph.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/graph"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// graphWorld is a broker with instances on it.
type graphWorld struct {
	a   *liveApp // the instance whose broker it is
	url string
}

// phantom is the node of the instances that the paho client describes.
var phantom = graph.Node{Name: "phantom", Type: "ghost",
	Subscriptions: []graph.Subscription{{Topic: "ghost/in", Depth: 5, Overflow: "block", Callback: "ghost/in"}},
	Publications:  []graph.Publication{{Topic: "ghost/out"}},
	Timers:        []graph.Timer{{Period: "1s", OneShot: true, Callback: "once"}}}

func newGraphWorld(t *testing.T) *graphWorld {
	t.Helper()
	a := startApp(t, "cli-graph-a", ""+
		"  - { name: relay, type: bridge, params: { from: 'in/+', to: 'out/+' } }\n"+
		"  - { name: beat, type: heartbeat, params: { topic: hb/a, period: 20ms } }\n")
	startAppOn(t, a.url, "cli-graph-b", "  - { name: sink, type: heartbeat, params: { topic: hb/b, period: 1h } }\n")
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("not{metrics\n"))
	}))
	t.Cleanup(garbage.Close)
	c := pahoClient(t, a.url, "cli-graph-ghosts")
	for _, g := range []struct{ id, status, metrics string }{
		{"ghost-dead-metrics", "online", fmt.Sprintf("http://127.0.0.1:%d/metrics", mqtttest.FreePort(t))},
		{"ghost-bad-metrics", "online", garbage.URL + "/metrics"},
		{"ghost-no-metrics", "online", garbage.URL + "/nothing"},
		{"ghost-killed", "offline", garbage.URL + "/metrics"},
	} {
		data, err := json.Marshal(graph.Graph{ClientID: g.id, Metrics: g.metrics, Nodes: []graph.Node{phantom}})
		require.NoError(t, err)
		publish(t, c, graph.Topic(g.id), true, string(data))
		publish(t, c, "robotexec/"+g.id+"/status", true, g.status)
	}
	publish(t, c, "robotexec/no-graph/status", true, "online")
	publish(t, c, graph.Topic("no-graph"), true, "not json")
	publish(t, c, "robotexec/no-graph/fence", false, "ignored")
	publish(t, c, graph.Topic("gone"), true, `{"nodes":[]}`)
	publish(t, c, graph.Topic("gone"), true, "") // cleared: not listed
	return &graphWorld{a: a, url: a.url}
}

// TestGraphCommands runs the commands on one world, since it takes a
// moment to build.
func TestGraphCommands(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	t.Run("node list", w.testNodeList)
	t.Run("node info", w.testNodeInfo)
	t.Run("node info -json", w.testNodeInfoJSON)
	t.Run("topic list", w.testTopicList)
}

func (w *graphWorld) testNodeList(t *testing.T) {
	var r result
	waitUntil(t, traffic, "both instances' graphs", func() bool {
		r = cli(t, "node", "list", "-broker", w.url)
		return r.code == ExitOK && regexp.MustCompile(`(?m)^cli-graph-b `).MatchString(r.stdout)
	}, func() string { return r.String() })
	require.Empty(t, r.stderr)
	require.Regexp(t, `^INSTANCE +STATE +VERSION +STARTED\n`+
		`cli-graph-a +online +`+testVersion+` +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n`+
		`cli-graph-b +online +`+testVersion+` +\S+Z\n`+
		`ghost-bad-metrics +online +- +-\n`+
		`ghost-dead-metrics +online +- +-\n`+
		`ghost-killed +offline \(stale graph\) +- +-\n`+
		`ghost-no-metrics +online +- +-\n`+
		`no-graph +online +- +-\n\n`+
		`NODE +TYPE +GROUP +INSTANCE\n`+
		`beat +heartbeat +- +cli-graph-a\n`+
		`relay +bridge +- +cli-graph-a\n`+
		`sink +heartbeat +- +cli-graph-b\n`+
		`phantom +ghost +- +ghost-bad-metrics\n`+
		`phantom +ghost +- +ghost-dead-metrics\n`+
		`phantom +ghost +- +ghost-no-metrics\n$`, r.stdout, "the killed instance's nodes are not listed")

	r = cli(t, "node", "list", "-json", "-broker", w.url)
	require.Equal(t, ExitOK, r.code, "%s", r)
	var out struct {
		Instances []struct {
			ClientID string `json:"client_id"`
			State    string
			Stale    bool
			Version  string
			Started  *time.Time
			Nodes    []struct{ Name, Type, Group string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), "%s", r)
	require.Len(t, out.Instances, 7)
	a, killed, noGraph := out.Instances[0], out.Instances[4], out.Instances[6]
	require.Equal(t, "cli-graph-a", a.ClientID)
	require.NotNil(t, a.Started)
	require.Len(t, a.Nodes, 2)
	require.Equal(t, "ghost-killed", killed.ClientID)
	require.True(t, killed.Stale)
	require.Equal(t, "offline", killed.State)
	require.Nil(t, killed.Started)
	require.Equal(t, "no-graph", noGraph.ClientID)
	require.Empty(t, noGraph.Nodes)
}

func (w *graphWorld) testNodeInfo(t *testing.T) {
	// The heartbeat's timer runs every 20 ms: its instance's metrics
	// count its runs and their dispatch latency.
	var r result
	waitUntil(t, traffic, "the timer's runs and latency", func() bool {
		r = cli(t, "node", "info", "-broker", w.url, "beat")
		return r.code == ExitOK && regexp.MustCompile(`(?m)^beat +timer +20ms +\S+ +- +- +[1-9]\d* +\d\S*s +\d\S*s +0$`).MatchString(r.stdout)
	}, func() string { return r.String() })
	require.Regexp(t, `^node: +beat\ntype: +heartbeat\ngroup: +-\ninstance: +cli-graph-a \(online\)\nmetrics: +`+regexp.QuoteMeta(w.a.metrics)+`\n\n`+
		`CALLBACK +KIND +TRIGGER +GROUP +DEPTH +OVERFLOW +RUNS +LATENCY P50 +LATENCY P99 +DROPS\n`, r.stdout)
	require.Regexp(t, `\n\nPUBLICATIONS\nhb/a\n$`, r.stdout)

	// Four instances have a phantom: the metrics of three cannot be read
	// (said on stderr), the fourth is offline (not asked).
	r = cli(t, "node", "info", "-broker", w.url, "phantom")
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Regexp(t, `^robotexec node info: metrics of ghost-bad-metrics: http://\S+/metrics: text format parsing error.+\n`+
		`robotexec node info: metrics of ghost-dead-metrics: .*connection refused\n`+
		`robotexec node info: metrics of ghost-no-metrics: http://\S+/nothing: 404 Not Found\n$`, r.stderr)
	require.Len(t, regexp.MustCompile(`(?m)^node: +phantom$`).FindAllString(r.stdout, -1), 4)
	require.Contains(t, r.stdout, "instance:  ghost-killed (offline (stale graph))\n")
	require.Regexp(t, `(?m)^ghost/in +subscription +ghost/in +- +5 +block +- +- +- +-$`, r.stdout)
	require.Regexp(t, `(?m)^once +one-shot timer +1s +- +- +- +- +- +- +-$`, r.stdout)

	r = cli(t, "node", "info", "-broker", w.url, "nope")
	require.Equal(t, ExitFailure, r.code, "%s", r)
	require.Equal(t, `robotexec node info: no node "nope" on the broker (nodes: beat, phantom, relay, sink)`+"\n", r.stderr)
}

func (w *graphWorld) testNodeInfoJSON(t *testing.T) {
	c := pahoClient(t, w.url, "cli-graph-relay-feed")
	var info nodeInfoJSON
	var r result
	waitUntil(t, traffic, "the bridge's runs", func() bool {
		publish(t, c, "in/x", false, `{"seq":1}`)
		r = cli(t, "node", "info", "-json", "-broker", w.url, "relay")
		require.Equal(t, ExitOK, r.code, "%s", r)
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &info), "%s", r)
		return len(info.Callbacks) == 1 && info.Callbacks[0].Live != nil && info.Callbacks[0].Live.Runs >= 1
	}, func() string { return r.String() })
	require.Equal(t, "cli-graph-a", info.Instance)
	require.Equal(t, "online", info.State)
	require.Equal(t, []string{"out/+"}, info.Publications)
	cb := info.Callbacks[0]
	require.Equal(t, "subscription", cb.Kind)
	require.Equal(t, "in/+", cb.Trigger)
	require.Equal(t, "block", cb.Overflow, "the default of a QoS 1 subscription")
	require.Positive(t, cb.Depth)
	require.Positive(t, cb.Live.P99S)

	r = cli(t, "node", "info", "-json", "-broker", w.url, "phantom")
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Len(t, lines(r.stdout), 4, "one JSON object a node: %s", r)
}

func (w *graphWorld) testTopicList(t *testing.T) {
	c := pahoClient(t, w.url, "cli-graph-traffic")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // traffic on in/x while topic list listens
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				c.Publish("in/x", 0, false, `{"seq":2}`)
			}
		}
	}()
	r := cli(t, "topic", "list", "-broker", w.url, "-t", "700ms")
	close(stop)
	wg.Wait()
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Regexp(t, `^TOPIC +MESSAGES +PUBLISHERS +SUBSCRIBERS\n`, r.stdout)
	require.Regexp(t, `(?m)^hb/a +[1-9]\d* +beat@cli-graph-a +-$`, r.stdout)
	require.Regexp(t, `(?m)^in/x +[1-9]\d* +- +relay@cli-graph-a \(in/\+\)$`, r.stdout, "the bridge's input")
	require.Regexp(t, `(?m)^out/x +[1-9]\d* +relay@cli-graph-a \(out/\+\) +-$`, r.stdout, "its output")
	require.Regexp(t, `(?m)^hb/b +0 +sink@cli-graph-b +-$`, r.stdout, "a publication without traffic")
	require.Regexp(t, `(?m)^ghost/in +0 +- +phantom@ghost-bad-metrics, phantom@ghost-dead-metrics, phantom@ghost-no-metrics$`, r.stdout, "not the killed instance's")
	require.NotContains(t, r.stdout, "robotexec/")

	r = cli(t, "topic", "list", "-json", "-t", "0", "-broker", w.url)
	require.Equal(t, ExitOK, r.code, "%s", r)
	var out struct{ Topics []topicListJSON }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), "%s", r)
	byTopic := map[string]topicListJSON{}
	for _, tp := range out.Topics {
		require.Zero(t, tp.Messages, "-t 0: no traffic: %+v", tp)
		byTopic[tp.Topic] = tp
	}
	require.Equal(t, []endpoint{{Node: "relay", Instance: "cli-graph-a"}}, byTopic["in/+"].Subscribers, "the pattern itself, without traffic")
	require.Equal(t, []endpoint{{Node: "relay", Instance: "cli-graph-a"}}, byTopic["out/+"].Publishers)
	require.Len(t, byTopic["ghost/out"].Publishers, 3, "not the killed instance's")
}

// TestGraphCommandsErrors: a wrong argument count is exit 2; a broker
// that is not there is exit 1, as is a node no instance has.
func TestGraphCommandsErrors(t *testing.T) {
	t.Parallel()
	dead := unreachable(t)
	bare := mqtttest.Embedded(t, broker.Config{}).URL()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"node list with an argument", []string{"node", "list", "x"}, ExitUsage, "robotexec node list: want 0 argument(s)\nUsage: robotexec node list"},
		{"node info without NAME", []string{"node", "info"}, ExitUsage, "robotexec node info: want 1 argument(s)"},
		{"topic list with an argument", []string{"topic", "list", "x"}, ExitUsage, "robotexec topic list: want 0 argument(s)"},
		{"node list without broker", []string{"node", "list", "-broker", dead, "-timeout", refusedWait}, ExitFailure, "robotexec node list: "},
		{"node info without broker", []string{"node", "info", "-broker", dead, "-timeout", refusedWait, "x"}, ExitFailure, "robotexec node info: "},
		{"topic list without broker", []string{"topic", "list", "-broker", dead, "-timeout", refusedWait}, ExitFailure, "robotexec topic list: "},
		{"node info on an empty broker", []string{"node", "info", "-broker", bare, "x"}, ExitFailure,
			`robotexec node info: no node "x" on the broker (no instance has a graph)` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := cli(t, tc.args...)
			require.Equal(t, tc.code, r.code, "%s", r)
			require.Empty(t, r.stdout)
			require.Contains(t, r.stderr, tc.want)
			if tc.code == ExitFailure && tc.args[2] == "-broker" && tc.args[3] == dead {
				require.Contains(t, r.stderr, "connection refused")
			}
		})
	}
	r := cli(t, "node", "list", "-broker", bare)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Regexp(t, `^INSTANCE +STATE +VERSION +STARTED\n\nNODE +TYPE +GROUP +INSTANCE\n$`, r.stdout, "no instance")
}
