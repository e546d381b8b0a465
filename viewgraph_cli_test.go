package robotexec_test

// End-to-end test of the live view's connection graph with an instance
// that dies.

import (
	"encoding/json"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// TestViewGraphDeadInstance: the live view of robotexec run shows the
// nodes of another instance on its broker in the connection graph; when
// that instance is killed (SIGKILL: its retained graph stays, the broker
// publishes its will, status offline), its nodes leave the graph.
func TestViewGraphDeadInstance(t *testing.T) {
	t.Parallel()
	viewPort := freePort(t)
	a := startPipeline(t, pipelineOptions{broker: "embedded", clientID: "viewgraph-a", inProcess: true,
		extra: fmt.Sprintf("view: { listen: 127.0.0.1:%d }\n", viewPort),
		nodes: "  - { name: beat, type: heartbeat, params: { topic: hb/a, period: 1s } }\n"})
	waitHealthy(t, a)
	ws := dialView(t, viewPort)
	require.NoError(t, ws.WriteJSON(map[string]any{"op": "subscribeConnectionGraph"}))

	b := startPipeline(t, pipelineOptions{broker: a.url, clientID: "viewgraph-b", inProcess: true,
		nodes: "  - { name: sink, type: sink, params: { input: out/x } }\n"})
	subs := map[string][]string{}
	readGraph := func(done func() bool, what string) {
		t.Helper()
		require.NoError(t, ws.SetReadDeadline(time.Now().Add(traffic)))
		for !done() {
			typ, data, err := ws.ReadMessage()
			require.NoError(t, err, "%s: subscribers %v", what, subs)
			var u struct {
				Op               string
				SubscribedTopics []struct {
					Name          string
					SubscriberIDs []string `json:"subscriberIds"`
				}
				RemovedTopics []string
			}
			if typ != websocket.TextMessage || json.Unmarshal(data, &u) != nil || u.Op != "connectionGraphUpdate" {
				continue
			}
			for _, s := range u.SubscribedTopics {
				subs[s.Name] = s.SubscriberIDs
			}
			for _, name := range u.RemovedTopics {
				delete(subs, name)
			}
		}
	}
	readGraph(func() bool { return slices.Contains(subs["out/x"], "sink@viewgraph-b") }, "b's sink shown")
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGKILL))
	readGraph(func() bool { return !slices.Contains(subs["out/x"], "sink@viewgraph-b") }, "b's sink gone")
}

// dialView connects a viewer to the live view on port; the test's end
// closes it.
func dialView(t *testing.T, port int) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"foxglove.websocket.v1"}, HandshakeTimeout: traffic}
	ws, _, err := d.Dial(fmt.Sprintf("ws://127.0.0.1:%d/", port), nil)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	return ws
}
