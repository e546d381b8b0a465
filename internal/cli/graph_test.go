package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/graph"
)

// goldenInstances are two instances as their graph and status topics
// describe them: one online, one killed (offline, its graph stale).
func goldenInstances() []*instance {
	started := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	return []*instance{
		{Status: "online", hasGraph: true, Graph: graph.Graph{ClientID: "robot-1", Version: "v1.2.0", Started: started,
			Nodes: []graph.Node{
				{Name: "bridge", Type: "bridge",
					Subscriptions: []graph.Subscription{{Topic: "sensors/+/raw", Depth: 10, Overflow: "drop_oldest", Callback: "bridge", Group: "bridge"}},
					Publications:  []graph.Publication{{Topic: "robot/+/data"}}},
				{Name: "filter", Type: "imu_filter", Group: "control",
					Subscriptions: []graph.Subscription{{Topic: "robot/imu/data", Depth: 5, Overflow: "block", Callback: "robot/imu/data", Group: "control"}},
					Publications:  []graph.Publication{{Topic: "robot/imu/filtered"}},
					Timers:        []graph.Timer{{Period: "100ms", Callback: "timer(100ms)", Group: "control"}}},
			}}},
		{Status: "offline", hasGraph: true, Graph: graph.Graph{ClientID: "robot-2", Version: "v1.2.0", Started: started,
			Nodes: []graph.Node{{Name: "imu", Type: "sim_imu", Publications: []graph.Publication{{Topic: "sensors/imu/raw"}}}}}},
	}
}

func TestNodeListGolden(t *testing.T) {
	var b bytes.Buffer
	printNodeList(&b, goldenInstances())
	require.Equal(t, ""+
		"INSTANCE  STATE                  VERSION  STARTED\n"+
		"robot-1   online                 v1.2.0   2026-05-01T08:00:00Z\n"+
		"robot-2   offline (stale graph)  v1.2.0   2026-05-01T08:00:00Z\n"+
		"\n"+
		"NODE    TYPE        GROUP    INSTANCE\n"+
		"bridge  bridge      -        robot-1\n"+
		"filter  imu_filter  control  robot-1\n", b.String(), "robot-2's graph is stale: its nodes are not listed")
}

func TestNodeInfoGolden(t *testing.T) {
	ins := goldenInstances()
	found, nodes := findNode(ins, "filter")
	require.Len(t, found, 1)
	info := describeNode(found[0], nodes[0], &bytes.Buffer{})
	info.Callbacks[0].Live = &liveStats{Runs: 1200, P50S: 0.000012, P99S: 0.00031, Dropped: 3}
	var b bytes.Buffer
	printNodeInfo(&b, info)
	require.Equal(t, ""+
		"node:      filter\n"+
		"type:      imu_filter\n"+
		"group:     control\n"+
		"instance:  robot-1 (online)\n"+
		"metrics:   -\n"+
		"\n"+
		"CALLBACK        KIND          TRIGGER         GROUP    DEPTH  OVERFLOW  RUNS  LATENCY P50  LATENCY P99  DROPS\n"+
		"robot/imu/data  subscription  robot/imu/data  control  5      block     1200  12µs         310µs        3\n"+
		"timer(100ms)    timer         100ms           control  -      -         -     -            -            -\n"+
		"\n"+
		"PUBLICATIONS\n"+
		"robot/imu/filtered\n", b.String())
}

func TestTopicListGolden(t *testing.T) {
	seen := map[string]int{"sensors/imu/raw": 100, "robot/imu/data": 100, "other": 3}
	var b bytes.Buffer
	printTopicList(&b, topicTable(goldenInstances(), seen))
	require.Equal(t, ""+
		"TOPIC               MESSAGES  PUBLISHERS                     SUBSCRIBERS\n"+
		"other               3         -                              -\n"+
		"robot/imu/data      100       bridge@robot-1 (robot/+/data)  filter@robot-1\n"+
		"robot/imu/filtered  0         filter@robot-1                 -\n"+
		"sensors/imu/raw     100       -                              bridge@robot-1 (sensors/+/raw)\n", b.String(),
		"robot-2's graph is stale: its imu publishes nothing")
}

func TestGraphJSONGolden(t *testing.T) {
	ins := goldenInstances()
	var b bytes.Buffer
	require.Equal(t, ExitOK, printJSON(&b, &b, nodeListOut(ins)))
	require.Equal(t, `{"instances":[`+
		`{"client_id":"robot-1","state":"online","stale":false,"version":"v1.2.0","started":"2026-05-01T08:00:00Z","nodes":[{"name":"bridge","type":"bridge","group":""},{"name":"filter","type":"imu_filter","group":"control"}]},`+
		`{"client_id":"robot-2","state":"offline","stale":true,"version":"v1.2.0","started":"2026-05-01T08:00:00Z","nodes":[{"name":"imu","type":"sim_imu","group":""}]}]}`+"\n", b.String())

	b.Reset()
	found, nodes := findNode(ins, "bridge")
	require.Equal(t, ExitOK, printJSON(&b, &b, describeNode(found[0], nodes[0], &b)))
	require.Equal(t, `{"name":"bridge","type":"bridge","group":"","instance":"robot-1","state":"online","stale":false,`+
		`"callbacks":[{"name":"bridge","kind":"subscription","trigger":"sensors/+/raw","group":"bridge","depth":10,"overflow":"drop_oldest"}],`+
		`"publications":["robot/+/data"]}`+"\n", b.String())

	b.Reset()
	topics := topicTable(ins, map[string]int{"sensors/imu/raw": 7})
	require.Equal(t, ExitOK, printJSON(&b, &b, topics[len(topics)-1]))
	require.Equal(t, `{"topic":"sensors/imu/raw","messages":7,"publishers":[],`+
		`"subscribers":[{"node":"bridge","instance":"robot-1","filter":"sensors/+/raw"}]}`+"\n", b.String())
}
