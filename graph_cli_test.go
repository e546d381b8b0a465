package robotexec_test

// End-to-end tests of the graph topic and the node and topic list
// commands: two instances on one broker, the embedded one and mosquitto.

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtttest"
)

type nodeListOut struct {
	Instances []struct {
		ClientID string `json:"client_id"`
		State    string `json:"state"`
		Stale    bool   `json:"stale"`
		Version  string `json:"version"`
		Nodes    []struct{ Name, Type, Group string }
	}
}

func nodeList(t *testing.T, url string) nodeListOut {
	t.Helper()
	r := runCmd(t, quickExit, robotexecBin, nil, "node", "list", "-json", "-broker", url)

	require.Equal(t, 0, r.code, "%s", r)
	var out nodeListOut
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), "%s", r)
	return out
}

// states returns each instance's state, "offline (stale)" for a stale
// graph, and its nodes.
func states(l nodeListOut) map[string]string {
	m := map[string]string{}
	for _, in := range l.Instances {
		s := in.State
		if in.Stale {
			s += " (stale)"
		}
		for _, n := range in.Nodes {
			s += " " + n.Name + ":" + n.Type
		}
		m[in.ClientID] = s
	}
	return m
}

// TestGraphCommands: node list shows the nodes of two instances; node
// info shows each callback, with live runs from the metrics; topic list
// shows a bridge's input and output with their nodes; an instance killed
// shows as offline with a stale graph, one stopped cleanly is gone.
func TestGraphCommands(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"embedded", "mosquitto"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			broker := "embedded"
			if name == "mosquitto" {
				broker = mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{}).URL()
			}
			a := startPipeline(t, pipelineOptions{broker: broker, clientID: "graph-a-" + name, inProcess: true, nodes: "" +
				"  - { name: relay, type: bridge, params: { from: 'in/+', to: 'out/+' } }\n" +
				"  - { name: beat, type: heartbeat, params: { topic: hb/a, period: 50ms } }\n"})
			url := a.url
			b := startPipeline(t, pipelineOptions{broker: url, clientID: "graph-b-" + name, inProcess: true,
				nodes: "  - { name: sink, type: sink, params: { input: out/x } }\n"})
			c := startPipeline(t, pipelineOptions{broker: url, clientID: "graph-c-" + name, inProcess: true,
				nodes: "  - { name: beat3, type: heartbeat, params: { topic: hb/c, period: 1s } }\n"})

			require.Equal(t, map[string]string{
				"graph-a-" + name: "online beat:heartbeat relay:bridge",
				"graph-b-" + name: "online sink:sink",
				"graph-c-" + name: "online beat3:heartbeat",
			}, states(nodeList(t, url)))

			publishUntil(t, url, func() bool { return b.sinkRuns(t) >= 1 }, pubMsg{"in/x", `{"seq":1}`})
			r := runCmd(t, quickExit, robotexecBin, nil, "node", "info", "-json", "-broker", url, "relay")
			require.Equal(t, 0, r.code, "%s", r)
			var info struct {
				Instance, State string
				Callbacks       []struct {
					Name, Kind, Trigger, Overflow string
					Depth                         int
					Live                          *struct{ Runs uint64 }
				}
				Publications []string
			}
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &info), "%s", r)
			require.Equal(t, "graph-a-"+name, info.Instance)
			require.Equal(t, []string{"out/+"}, info.Publications)
			require.Len(t, info.Callbacks, 1)
			cb := info.Callbacks[0]
			require.Equal(t, "subscription", cb.Kind)
			require.Equal(t, "in/+", cb.Trigger)
			require.Equal(t, "block", cb.Overflow, "the default of a QoS 1 subscription")
			require.Positive(t, cb.Depth)
			require.NotNil(t, cb.Live, "runs from the metrics")
			require.GreaterOrEqual(t, cb.Live.Runs, uint64(1))

			pc := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID("graph-pub-" + name))
			tok := pc.Connect()
			require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "connect: %v", tok.Error())
			stop := make(chan struct{})
			go func() { // traffic on in/x while topic list listens
				for {
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
						pc.Publish("in/x", 0, false, `{"seq":2}`)
					}
				}
			}()
			r = runCmd(t, quickExit, robotexecBin, nil, "topic", "list", "-broker", url, "-t", "1s")
			close(stop)
			pc.Disconnect(100)
			require.Equal(t, 0, r.code, "%s", r)
			require.Regexp(t, `(?m)^hb/a\s+\d+\s+beat@graph-a-`+name+`\s+-$`, r.stdout)
			require.Regexp(t, `(?m)^in/x\s+\d+\s+-\s+relay@graph-a-`+name+` \(in/\+\)$`, r.stdout, "the bridge's input")
			require.Regexp(t, `(?m)^out/x\s+\d+\s+relay@graph-a-`+name+` \(out/\+\)\s+sink@graph-b-`+name+`$`, r.stdout, "its output")

			require.NoError(t, b.cmd.Process.Signal(syscall.SIGKILL))
			c.signal(t, os.Interrupt)
			require.Equal(t, 0, c.wait(t, stopWithin))
			require.Eventually(t, func() bool {
				s := states(nodeList(t, url))
				_, cGone := s["graph-c-"+name]
				return s["graph-b-"+name] == "offline (stale) sink:sink" && !cGone
			}, traffic, 200*time.Millisecond, "b killed: offline, stale; c stopped: gone")

			r = runCmd(t, quickExit, robotexecBin, nil, "node", "info", "-broker", url, "nope")
			require.Equal(t, 1, r.code, "%s", r)
			require.Contains(t, r.stderr, `no node "nope" on the broker (nodes: beat, relay, sink)`)
		})
	}
}

// TestGraphDeadInstance: an instance killed with SIGKILL cannot clear its
// retained graph, but its status topic's last will says offline, which
// the broker publishes when the connection dies: node list then shows the
// instance as "offline (stale graph)" and lists none of its nodes, and
// topic list names none of them as publishers or subscribers; node list
// -json keeps them, marked stale. The embedded broker runs in another
// robotexec run, which stays.
func TestGraphDeadInstance(t *testing.T) {
	t.Parallel()
	a := startPipeline(t, pipelineOptions{broker: "embedded", clientID: "dead-a", inProcess: true,
		nodes: "  - { name: relay, type: bridge, params: { from: 'in/+', to: 'out/+' } }\n"})
	b := startPipeline(t, pipelineOptions{broker: a.url, clientID: "dead-b", inProcess: true, nodes: "" +
		"  - { name: sink, type: sink, params: { input: out/x } }\n" +
		"  - { name: beat, type: heartbeat, params: { topic: hb/b, period: 1h } }\n"})
	require.Equal(t, map[string]string{"dead-a": "online relay:bridge", "dead-b": "online beat:heartbeat sink:sink"},
		states(nodeList(t, a.url)))

	require.NoError(t, b.cmd.Process.Signal(syscall.SIGKILL))
	var r result
	require.Eventually(t, func() bool {
		r = runCmd(t, quickExit, robotexecBin, nil, "node", "list", "-broker", a.url)
		return r.code == 0 && regexp.MustCompile(`(?m)^dead-b +offline \(stale graph\) `).MatchString(r.stdout)
	}, traffic, 200*time.Millisecond, "the will: dead-b offline\n%s", &r)
	require.Regexp(t, `\nNODE +TYPE +GROUP +INSTANCE\nrelay +bridge +- +dead-a\n$`, r.stdout, "dead-b's nodes are not listed")
	require.Equal(t, "offline (stale) beat:heartbeat sink:sink", states(nodeList(t, a.url))["dead-b"], "-json keeps them, marked")

	r = runCmd(t, quickExit, robotexecBin, nil, "topic", "list", "-broker", a.url, "-t", "0")
	require.Equal(t, 0, r.code, "%s", r)
	require.NotContains(t, r.stdout, "dead-b")
	require.NotContains(t, r.stdout, "hb/b", "a topic only the dead instance's graph names")
	require.Regexp(t, `(?m)^out/\+ +0 +relay@dead-a +-$`, r.stdout, "out/x's subscriber is gone")
}

// TestGraphNoBroker: the commands exit 1 with a sentence when no broker
// listens at the URL.
func TestGraphNoBroker(t *testing.T) {
	t.Parallel()
	url := brokerURL(freePort(t))
	for _, args := range [][]string{{"node", "list"}, {"node", "info", "x"}, {"topic", "list"}} {
		full := append([]string{args[0], args[1], "-broker", url, "-timeout", "1s"}, args[2:]...)
		r := runCmd(t, quickExit, robotexecBin, nil, full...)
		require.Equal(t, 1, r.code, "%s", r)
		require.Contains(t, r.stderr, fmt.Sprintf("robotexec %s %s: ", args[0], args[1]), "%s", r)
		require.Contains(t, r.stderr, "connection refused", "%s", r)
	}
}
