package app

// Tests of Start and Shutdown on real configs: the embedded broker, or
// one of the test's, with paho clients outside the process publishing to
// the nodes, watching their output, their graph topic and their metrics.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/graph"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// TestStartEmbeddedBroker runs two chained bridges and a heartbeat on the
// embedded broker, with and without in-process delivery: every message
// published from outside comes out of the chain once, in order; the
// heartbeat beats; the graph topic describes the nodes; the metrics
// count the runs. After Shutdown the metrics server and the broker are
// gone, and a second Shutdown returns at once.
func TestStartEmbeddedBroker(t *testing.T) {
	t.Parallel()
	for _, inProcess := range []bool{true, false} {
		t.Run(fmt.Sprintf("in_process=%t", inProcess), func(t *testing.T) {
			t.Parallel()
			id := fmt.Sprintf("app-embedded-%t", inProcess)
			cfg := loadConfig(t, fmt.Sprintf(`executor: { workers: 2, timer_source: go, in_process: %t, queue_depth: 100 }
mqtt: { listen: "127.0.0.1:0", client_id: %s, qos: 1 }
metrics: { listen: "127.0.0.1:0" }
nodes:
  - { name: first, type: bridge, params: { from: in/+, to: mid/+ } }
  - { name: second, type: bridge, params: { from: mid/+, to: out/+ } }
  - { name: beat, type: heartbeat, params: { topic: hb, period: 20ms } }
`, inProcess, id))
			a := startApp(t, cfg, nil, Options{Version: "v9.9.9-test"})
			w := connectPaho(t, a.broker.URL(), id+"-watch")
			for _, f := range []string{"mid/#", "out/#", "hb", graph.Topic(id)} {
				w.subscribe(t, f)
			}

			var want []string
			for i := range 20 {
				want = append(want, strconv.Itoa(i))
			}
			want = append(want, "last")
			for _, p := range want {
				w.publish(t, "in/x", p, false)
			}
			w.await(t, "the last message out of the chain", 1, func(m mqttMsg) bool { return m.topic == "out/x" && m.payload == "last" })
			require.Equal(t, want, payloads(w.received(onTopic("mid/x"))), "the first bridge's output, once each, in order")
			require.Equal(t, want, payloads(w.received(onTopic("out/x"))), "the second bridge's output, once each, in order")

			requireBeats(t, w.await(t, "three beats", 3, onTopic("hb")))
			// metrics.listen has port 0: the graph names the port bound.
			metricsAt := "http://" + a.obs.server.Addr().String() + "/metrics"
			requireGraph(t, w.await(t, "the graph", 1, onTopic(graph.Topic(id)))[0], id, metricsAt)
			// The broker keeps it for who subscribes later.
			late := connectPaho(t, a.broker.URL(), id+"-late")
			late.subscribe(t, graph.Topic(id))
			kept := late.await(t, "the retained graph", 1, onTopic(graph.Topic(id)))[0]
			require.True(t, kept.retained, "the graph is retained")
			requireGraph(t, kept, id, metricsAt)

			base := "http://" + a.obs.server.Addr().String()
			runs := regexp.MustCompile(`(?m)^robotexec_callback_duration_seconds_count\{[^}]*node="second"[^}]*\} 21$`)
			eventually(t, "the metrics count the second bridge's 21 runs", func() bool {
				code, body := httpGet(t, base+"/metrics")
				return code == http.StatusOK && runs.MatchString(body)
			})
			_, body := httpGet(t, base+"/metrics")
			require.Contains(t, body, "\nrobotexec_mqtt_connected 1\n")

			require.NoError(t, shutdownWithin(t, a))
			require.NoError(t, shutdownWithin(t, a), "a second Shutdown")
			_, err := http.Get(base + "/metrics")
			require.Error(t, err, "the metrics server stops with the app")
			eventually(t, "the embedded broker closes", func() bool { return !w.c.IsConnectionOpen() })
		})
	}
}

// requireBeats checks heartbeat messages: their node, and seq numbers
// without gaps.
func requireBeats(t *testing.T, msgs []mqttMsg) {
	t.Helper()
	var prev uint64
	for i, m := range msgs {
		var b struct {
			Node string
			Seq  uint64
			Time string
		}
		require.NoError(t, json.Unmarshal([]byte(m.payload), &b), m.payload)
		require.Equal(t, "beat", b.Node)
		require.NotEmpty(t, b.Time)
		if i > 0 {
			require.Equal(t, prev+1, b.Seq, "seq numbers without gaps")
		}
		prev = b.Seq
	}
}

// requireGraph checks a's graph as its graph topic carries it.
func requireGraph(t *testing.T, m mqttMsg, id, metricsAt string) {
	t.Helper()
	var g graph.Graph
	require.NoError(t, json.Unmarshal([]byte(m.payload), &g), m.payload)
	require.Equal(t, id, g.ClientID)
	require.Equal(t, "v9.9.9-test", g.Version)
	require.False(t, g.Started.IsZero())
	require.Equal(t, metricsAt, g.Metrics)
	var nodes []string
	for _, n := range g.Nodes {
		nodes = append(nodes, n.Name+":"+n.Type)
		switch n.Name {
		case "first":
			require.Len(t, n.Subscriptions, 1)
			require.Equal(t, "in/+", n.Subscriptions[0].Topic)
		case "beat":
			require.Len(t, n.Timers, 1)
			require.Equal(t, "20ms", n.Timers[0].Period)
		}
	}
	slices.Sort(nodes)
	require.Equal(t, []string{"beat:heartbeat", "first:bridge", "second:bridge"}, nodes)
}

// TestShutdownDeadline: a Shutdown whose context ends before the queues
// have drained returns ctx.Err() and lets the stop carry on; a later
// Shutdown waits for it, and every message taken before the stop is
// handled. A clean stop clears the graph topic on the broker, which here
// outlives the app.
func TestShutdownDeadline(t *testing.T) {
	t.Parallel()
	b := mqtttest.Embedded(t, broker.Config{})
	const id = "app-shutdown"
	p := freshProbe("probe_shutdown")
	a := startApp(t, loadConfig(t, fmt.Sprintf(`executor: { workers: 1 }
mqtt: { broker: %s, client_id: %s, qos: 1, clean_session: true }
nodes:
  - { name: probe_shutdown, type: test_probe, params: { topic: probe/in } }
`, b.URL(), id)), nil, Options{})
	t.Cleanup(p.unblock) // before the app's own cleanup, on a failure
	w := connectPaho(t, b.URL(), id+"-watch")
	w.subscribe(t, graph.Topic(id))
	w.await(t, "the graph", 1, onTopic(graph.Topic(id)))

	w.publish(t, "probe/in", "block", false)
	awaitEntered(t, p)
	for range 3 {
		w.publish(t, "probe/in", "queued", false)
	}
	// The broker's PUBACK says nothing of the app: wait until the three
	// are in the probe's queue.
	cbs := a.ex.Callbacks()
	require.Len(t, cbs, 1)
	queue := cbs[0].Subscription
	eventually(t, "three messages queued behind the blocked one", func() bool { return queue.Len() == 3 })

	expired, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	require.ErrorIs(t, a.Shutdown(expired), context.DeadlineExceeded, "an expired deadline")
	require.ErrorIs(t, a.Shutdown(expired), context.DeadlineExceeded, "again, while the stop waits for the blocked callback")
	require.Zero(t, p.runs.Load(), "the blocked callback still runs")

	p.unblock()
	require.NoError(t, shutdownWithin(t, a))
	require.EqualValues(t, 4, p.runs.Load(), "the queued messages drained")
	require.NoError(t, shutdownWithin(t, a), "once stopped")

	cleared := w.await(t, "the graph cleared", 2, onTopic(graph.Topic(id)))
	require.Empty(t, cleared[len(cleared)-1].payload, "an empty retained message clears the graph")
}

// TestWriteTraceWithoutTrace: an app started without Options.TraceRuns
// has no trace to write; the file is closed all the same.
func TestWriteTraceWithoutTrace(t *testing.T) {
	t.Parallel()
	a := startApp(t, loadConfig(t, "mqtt: { listen: \"127.0.0.1:0\", client_id: app-no-trace }\n"), nil, Options{})
	require.NoError(t, shutdownWithin(t, a))
	f, err := os.Create(filepath.Join(t.TempDir(), "trace.json"))
	require.NoError(t, err)
	require.ErrorContains(t, a.WriteTrace(f), "the app records no trace (Options.TraceRuns is 0)")
	require.ErrorIs(t, f.Close(), os.ErrClosed, "WriteTrace closed the file")
}
