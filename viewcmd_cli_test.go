package robotexec_test

// End-to-end tests of robotexec view: the live view fed from a broker,
// with no nodes, watched and driven by the reference client of the
// Foxglove WebSocket protocol.

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/internal/npmci"
)

// demoOn returns the demo's config with its broker at url instead of the
// embedded one.
func demoOn(t *testing.T, url string) string {
	t.Helper()
	data, err := os.ReadFile("examples/config.yaml")
	require.NoError(t, err)
	const embedded = "broker: embedded\n  listen: 127.0.0.1:1883\n"
	require.Contains(t, string(data), embedded)
	path := t.TempDir() + "/config.yaml"
	writeFile(t, path, strings.Replace(string(data), embedded, "broker: "+url+"\n", 1))
	return path
}

// TestViewCommand: robotexec view on an external broker (the embedded one
// started by the test, and mosquitto), where the demo runs in another
// process, serves the reference client the topics its filters
// match (and no others), streams the 100 Hz IMU topic at its rate, and
// publishes the client's message to the broker, where the demo's bridge
// passes it on. Its connection graph is the demo's, from its graph topic.
// SIGINT ends it with exit 0.
func TestViewCommand(t *testing.T) {
	t.Parallel()
	for _, name := range brokerNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testViewCommand(t, externalBroker(t, name, broker.Config{}, mqtttest.MosquittoOptions{}).URL())
		})
	}
}

func testViewCommand(t *testing.T, url string) {
	node := npmci.Node(t, foxglovejsDir, "the Foxglove WebSocket reference client", "@foxglove/ws-protocol")
	demo := startRun(t, robotexecBin, demoOn(t, url))
	viewPort := freePort(t)
	// Flags stand between and after the filters. The client publishes
	// without credentials.
	v := startProc(t, robotexecBin, nil, "view", "robot/#", "-broker", url, "sensors/#", "-listen", fmt.Sprintf("127.0.0.1:%d", viewPort), "-anonymous-publish")
	v.stderr.waitFor(t, startup, "serving the live view")

	got := runViewClient(t, node, viewPort, demoPlan(`"graph":[{"node":"imu0","topic":"sensors/imu0/raw"}]`))
	require.Equal(t, "robotexec view", got.ServerInfo.Name)
	require.Contains(t, got.ServerInfo.Capabilities, "clientPublish")
	require.Contains(t, got.ServerInfo.Capabilities, "connectionGraph")
	require.NotContains(t, got.ServerInfo.Capabilities, "parameters", "no nodes, no parameters")
	requireDemoGraph(t, got)
	topics := map[string]bool{}
	for _, c := range got.Channels {
		require.Equal(t, "json", c.Encoding, "%s", c.Topic)
		require.True(t, strings.HasPrefix(c.Topic, "robot/") || strings.HasPrefix(c.Topic, "sensors/"), "%s is not under the filters", c.Topic)
		topics[c.Topic] = true
	}
	for _, topic := range []string{"sensors/imu0/raw", "robot/imu0/data", "robot/odom/data", "robot/imu0/filtered", "robot/view/data", "sensors/view/raw"} {
		require.True(t, topics[topic], "%s is not advertised: %v", topic, got.Channels)
	}
	requireDemoStream(t, got)

	v.signal(t, os.Interrupt)
	require.Equal(t, 0, v.wait(t, stopWithin), "%s", v)
	demo.signal(t, os.Interrupt)
	require.Equal(t, 0, demo.wait(t, stopWithin), "%s", demo)
}

// TestViewCommandExits: robotexec view exits 2 on a bad command line and
// 1 when the broker cannot be reached.
func TestViewCommandExits(t *testing.T) {
	t.Parallel()
	dead := brokerURL(freePort(t))
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad filter", []string{"view", "-broker", dead, "a/#/b"}, 2, "robotexec view:"},
		{"bad qos", []string{"view", "-broker", dead, "-qos", "3"}, 2, "-qos 3"},
		{"open to the network", []string{"view", "-broker", dead, "-listen", "0.0.0.0:0"}, 2, "reachable from the network"},
		{"no broker", []string{"view", "-broker", dead, "-listen", "127.0.0.1:0"}, 1, "robotexec view:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runCmd(t, quickExit, robotexecBin, nil, tc.args...)
			require.Equal(t, tc.code, r.code, "%s", r)
			require.Contains(t, r.stderr, tc.want, "%s", r)
		})
	}
}
