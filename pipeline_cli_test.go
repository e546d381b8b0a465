package robotexec_test

// End-to-end tests of the message path between nodes: robotexec run on
// pipelines of the example stage and sink nodes, with the embedded broker
// and with mosquitto, watched from outside with robotexec echo and the
// instance's metrics.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtttest"
)

// pipelineRun is a robotexec run of a generated config.
type pipelineRun struct {
	*proc
	url     string // the broker's
	metrics string // base URL of /metrics
}

// pipelineOptions say what config startPipeline generates.
type pipelineOptions struct {
	broker    string // "embedded" or a URL
	clientID  string
	inProcess bool
	executor  string // more executor: keys, YAML flow style
	mqtt      string // more mqtt: keys, YAML flow style
	nodes     string // the nodes: list, YAML
	extra     string // more top-level sections, YAML
}

// startPipeline writes a config and runs it with metrics on a free port.
func startPipeline(t *testing.T, o pipelineOptions) *pipelineRun {
	t.Helper()
	mport := freePort(t)
	r := &pipelineRun{url: o.broker, metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", mport)}
	mqttKeys := fmt.Sprintf("broker: %s", o.broker)
	if o.broker == "embedded" {
		port := freePort(t)
		r.url = brokerURL(port)
		mqttKeys += fmt.Sprintf(", listen: 127.0.0.1:%d", port)
	}
	if o.clientID == "" {
		o.clientID = "robotexec-" + strings.NewReplacer("/", "-").Replace(t.Name())
	}
	cfg := fmt.Sprintf("executor: { workers: 2, in_process: %v%s }\nmqtt: { %s, client_id: %s, qos: 1%s }\nmetrics: { listen: 127.0.0.1:%d }\n%snodes:\n%s",
		o.inProcess, o.executor, mqttKeys, o.clientID, o.mqtt, mport, o.extra, o.nodes)
	path := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, path, cfg)
	r.proc = startRun(t, robotexecBin, path)
	t.Cleanup(func() {
		if t.Failed() && !r.hasExited() {
			// What the run's goroutines were doing, for a stall.
			_, dump := getURL(t, strings.TrimSuffix(r.metrics, "metrics")+"debug/pprof/goroutine?debug=1")
			t.Logf("goroutines of the run:\n%s", dump)
			_, metrics := getURL(t, r.metrics)
			t.Logf("counts of the run:\n%s", stallCounts(metrics))
		}
	})
	return r
}

// stallCounts picks from a run's metrics the counts that tell where a
// stalled pipeline stopped: the MQTT client's, the queues' and the drops,
// and the callbacks' runs.
func stallCounts(metrics string) string {
	var b strings.Builder
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, "robotexec_mqtt_") || strings.HasPrefix(line, "robotexec_queue_depth") ||
			strings.HasPrefix(line, "robotexec_messages_dropped_total") ||
			strings.HasPrefix(line, "robotexec_callback_duration_seconds_count") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// fiveStages is a heartbeat through five stages to a sink.
func fiveStages(period, work string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - { name: source, type: heartbeat, params: { topic: p/0, period: %s } }\n", period)
	for i := 1; i <= 5; i++ {
		w := "0s"
		if i == 1 {
			w = work
		}
		fmt.Fprintf(&b, "  - { name: stage%d, type: stage, params: { input: p/%d, output: p/%d, work: %s } }\n", i, i-1, i, w)
	}
	b.WriteString("  - { name: sink, type: sink, params: { input: p/5 } }\n")
	return b.String()
}

// metric scrapes the run's metrics and returns the value of series, a
// metric name with its labels as Prometheus prints them.
func (r *pipelineRun) metric(t *testing.T, series string) float64 {
	t.Helper()
	code, body := getURL(t, r.metrics)
	require.Equal(t, 200, code)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
	require.NotNil(t, m, "series %s in:\n%s", series, body)
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return v
}

// sinkRuns is how many messages the sink's callback has run.
func (r *pipelineRun) sinkRuns(t *testing.T) float64 {
	return r.metric(t, `robotexec_callback_duration_seconds_count{callback="sink",node="sink"}`)
}

// stop stops the run and returns the sink's last report: received and
// last seq, after checking that it saw no gap and nothing out of order.
func (r *pipelineRun) stop(t *testing.T) (received, last int) {
	t.Helper()
	return r.stopAllowing(t, 0, 0)
}

// stopAllowing is stop that allows the sink dups messages again (QoS 1's
// redeliveries) and gaps seqs missing (what a clean session's broker
// forgot at a reconnection), and nothing else.
func (r *pipelineRun) stopAllowing(t *testing.T, dups, gaps int) (received, last int) {
	t.Helper()
	r.signal(t, os.Interrupt)
	require.Equal(t, 0, r.wait(t, stopWithin))
	var report string
	for _, l := range r.stderr.all() {
		if strings.Contains(l, "msg=sink ") {
			report = l
		}
	}
	require.NotEmpty(t, report, "the sink's report:\n%s", r)
	m := regexp.MustCompile(`received=(\d+) last_seq=(\d+) gaps=(\d+) out_of_order=(\d+)`).FindStringSubmatch(report)
	require.NotNil(t, m, report)
	skipped, _ := strconv.Atoi(m[3])
	require.LessOrEqual(t, skipped, gaps, "no seq skipped: %s", report)
	again, _ := strconv.Atoi(m[4])
	require.LessOrEqual(t, again, dups, "none again or out of order: %s", report)
	received, _ = strconv.Atoi(m[1])
	last, _ = strconv.Atoi(m[2])
	require.Equal(t, last+again-skipped, received, report)
	return received, last
}

// requireContiguous checks that echo's lines TOPIC PAYLOAD carry heartbeat
// seqs that follow each other.
func requireContiguous(t *testing.T, out string) {
	t.Helper()
	seqRe := regexp.MustCompile(`"seq":(\d+)`)
	prev := 0
	for i, l := range lines(out) {
		m := seqRe.FindStringSubmatch(l)
		require.NotNil(t, m, l)
		seq, _ := strconv.Atoi(m[1])
		if i > 0 {
			require.Equal(t, prev+1, seq, "line %d after seq %d: %s", i, prev, l)
		}
		prev = seq
	}
}

// TestRunPipelineInProcess runs a heartbeat through five stages to a sink
// in one process: the sink gets every seq once, in order; an outside
// subscriber of a middle topic sees every message; and the hops do not go
// through the broker: with the embedded broker the client receives none of
// them (the broker does not send the process its own publications back,
// and the client sends it only those another client wants), with
// mosquitto none either (MQTT 5's No Local: mosquitto gets every
// publication, sends none back); with in_process false every hop comes
// back from the broker.
func TestRunPipelineInProcess(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		mosquitto bool
		inProcess bool
	}{
		{"embedded", false, true},
		{"mosquitto", true, true},
		{"embedded broker only", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := "embedded"
			if tc.mosquitto {
				url = mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{Persistence: true}).URL()
			}
			r := startPipeline(t, pipelineOptions{broker: url, inProcess: tc.inProcess, nodes: fiveStages("2ms", "0s"),
				executor: ", queue_depth: 100, overflow: block"})
			echo := runCmd(t, traffic, robotexecBin, nil, "echo", "-broker", r.url, "-qos", "1", "-n", "300", "p/3")
			require.Equal(t, 0, echo.code, "%s", echo)
			requireContiguous(t, echo.stdout)

			runs := r.sinkRuns(t)
			received := r.metric(t, "robotexec_mqtt_messages_received_total")
			published := r.metric(t, "robotexec_mqtt_messages_published_total")
			t.Logf("%s: sink runs %.0f, messages received from the broker %.0f, published %.0f", tc.name, runs, received, published)
			require.Greater(t, runs, 100.0)
			switch {
			case !tc.inProcess:
				require.GreaterOrEqual(t, received, 5*runs, "every hop through the broker")
			case tc.mosquitto:
				require.Less(t, received, 10.0, "no hop back from the broker (the status aside)")
				require.GreaterOrEqual(t, published, 5*runs, "every hop to the broker, for anyone else")
			default:
				require.Less(t, received, 10.0, "no hop through the broker (the status aside)")
				// The embedded broker tells which topics other clients
				// want: only p/3, while echo watched it, went out.
				require.Less(t, published, 1.5*runs)
			}
			got, _ := r.stop(t)
			require.GreaterOrEqual(t, float64(got), runs)
		})
	}
}

// TestRunSlowStageMutesItsProducer feeds a stage that takes 2 ms a message
// from a heartbeat at 4 kHz, with the block policy and a queue of 10, on
// the embedded broker and on mosquitto: the heartbeat is muted while the
// stage's queue is full and resumed as it drains, so nothing is dropped,
// the queue stays bounded, and the sink gets every seq in order.
func TestRunSlowStageMutesItsProducer(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"embedded", "mosquitto"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := "embedded"
			if name == "mosquitto" {
				url = mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{Persistence: true}).URL()
			}
			r := startPipeline(t, pipelineOptions{broker: url, inProcess: true, nodes: fiveStages("250us", "2ms"),
				executor: ", queue_depth: 10, overflow: block"})
			const depth = `robotexec_queue_depth{callback="stage",node="stage1"}`
			maxDepth := 0.0
			deadline := time.Now().Add(traffic)
			for r.sinkRuns(t) < 300 {
				require.True(t, time.Now().Before(deadline), "300 messages through the slow stage within %v", traffic)
				maxDepth = max(maxDepth, r.metric(t, depth))
			}
			missed := r.metric(t, `robotexec_timer_missed_ticks_total{callback="beat",node="source"}`)
			_, body := getURL(t, r.metrics)
			for _, l := range lines(body) {
				if strings.HasPrefix(l, "robotexec_messages_dropped_total{") {
					require.True(t, strings.HasSuffix(l, " 0"), "no drop: %s", l)
				}
			}
			received, _ := r.stop(t)
			t.Logf("%s: sink received %d; stage1's queue at most %.0f; the heartbeat missed %.0f ticks while muted", name, received, maxDepth, missed)
			require.LessOrEqual(t, maxDepth, 11.0, "the queue stays bounded")
			require.Positive(t, missed, "the heartbeat was held back")
		})
	}
}

// TestRunSharedSubscriptionSplitsLoad runs two instances whose bridges read
// $share/workers/in/+: the broker splits the messages between them, each
// forwarded once; when one stops, the other forwards everything.
func TestRunSharedSubscriptionSplitsLoad(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"embedded", "mosquitto"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bridge := "  - { name: workers, type: bridge, params: { from: $share/workers/in/+, to: out/+ } }\n"
			var a *pipelineRun
			url := "embedded"
			if name == "mosquitto" {
				url = mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{Persistence: true}).URL()
			}
			a = startPipeline(t, pipelineOptions{broker: url, clientID: "robotexec-a", inProcess: true, nodes: bridge})
			b := startPipeline(t, pipelineOptions{broker: a.url, clientID: "robotexec-b", inProcess: true, nodes: bridge})
			obs := startProc(t, robotexecBin, nil, "echo", "-broker", a.url, "-qos", "1", "out/#")
			publishUntil(t, a.url, func() bool {
				_, ok := obs.stdout.find(func(l string) bool { return l == "out/probe ready" })
				return ok
			}, pubMsg{"out/probe", "ready"})

			published := func(r *pipelineRun) float64 { return r.metric(t, "robotexec_mqtt_messages_published_total") }
			// Both are subscribed once each has forwarded something.
			n := 0
			send := func(count int) {
				for range count {
					n++
					r := runCmd(t, quickExit, robotexecBin, nil, "pub", "-broker", a.url, "-qos", "1", "in/x", fmt.Sprint("m", n))
					require.Equal(t, 0, r.code, "%s", r)
				}
			}
			for published(a) == 0 || published(b) == 0 {
				require.Less(t, n, 200, "both instances forward")
				send(5)
			}
			before := [2]float64{published(a), published(b)}
			send(40)
			waitForwarded(t, obs, n)
			split := [2]float64{published(a) - before[0], published(b) - before[1]}
			t.Logf("%s: of 40 messages, instance a forwarded %.0f, b %.0f", name, split[0], split[1])
			require.Equal(t, 40.0, split[0]+split[1], "each once")

			b.signal(t, os.Interrupt)
			require.Equal(t, 0, b.wait(t, stopWithin))
			before[0] = published(a)
			send(20)
			waitForwarded(t, obs, n)
			require.Equal(t, 20.0, published(a)-before[0], "a takes the whole load")
			var forwarded []string
			for _, l := range obs.stdout.all() {
				if !strings.HasPrefix(l, "out/probe ") {
					forwarded = append(forwarded, l)
				}
			}
			requireEachOnce(t, forwarded, n)
		})
	}
}

// waitForwarded waits until p printed the forwarded messages m1..mn.
func waitForwarded(t *testing.T, p *proc, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), traffic)
	defer cancel()
	count := func() int {
		c := 0
		for _, l := range p.stdout.all() {
			if strings.HasPrefix(l, "out/x ") {
				c++
			}
		}
		return c
	}
	_, err := p.stdout.await(ctx, func(string) bool { return count() >= n })
	require.NoError(t, err, "%d forwarded messages; have %d:\n%s", n, count(), p)
}

// requireEachOnce checks that the lines out/x mI hold each of m1..mn once.
func requireEachOnce(t *testing.T, ls []string, n int) {
	t.Helper()
	seen := map[string]int{}
	for _, l := range ls {
		seen[l]++
	}
	for i := 1; i <= n; i++ {
		require.Equal(t, 1, seen[fmt.Sprintf("out/x m%d", i)], "out/x m%d in:\n%s", i, strings.Join(ls, "\n"))
	}
	require.Len(t, ls, n)
}

// TestRunRetainedReachesTheBroker has a bridge republish retained: the
// process's own retained publication reaches the broker, and a subscriber
// that comes later gets it, on both brokers.
func TestRunRetainedReachesTheBroker(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"embedded", "mosquitto"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := "embedded"
			if name == "mosquitto" {
				url = mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{Persistence: true}).URL()
			}
			r := startPipeline(t, pipelineOptions{broker: url, inProcess: true,
				nodes: "  - { name: keeper, type: bridge, params: { from: in/+, to: state/+, retain: true } }\n"})
			// Publish until the bridge has subscribed and republished.
			publishUntil(t, r.url, func() bool {
				return r.metric(t, `robotexec_callback_duration_seconds_count{callback="bridge",node="keeper"}`) > 0
			},
				pubMsg{"in/mode", "auto"})
			late := runCmd(t, traffic, robotexecBin, nil, "echo", "-broker", r.url, "-n", "1", "state/mode")
			require.Equal(t, 0, late.code, "%s", late)
			require.Equal(t, "state/mode auto\n", late.stdout)
			r.signal(t, os.Interrupt)
			require.Equal(t, 0, r.wait(t, stopWithin))
		})
	}
}
