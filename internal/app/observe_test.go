package app

// End-to-end tests of observability on the real wiring, in process: start
// and stop as robotexec run does, against an embedded broker of the
// test's own that it can close, with metrics served on a free port and
// scraped over HTTP. A test-only node type, test_probe, counts its runs,
// blocks or panics on demand.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/nodes"
	_ "github.com/robotexec/robotexec/nodes/builtin" // heartbeat
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/subscribers/mqtt"
	"github.com/robotexec/robotexec/subscribers/mqtt/broker"
)

// probe is the state of a test_probe node, by node name.
type probe struct {
	runs    atomic.Int64
	entered chan struct{} // a "block" message started
	release chan struct{} // closed to let "block" messages return
	once    sync.Once
}

var probes sync.Map // node name → *probe

func newProbe() *probe { return &probe{entered: make(chan struct{}, 1), release: make(chan struct{})} }

func probeOf(name string) *probe {
	p, _ := probes.LoadOrStore(name, newProbe())
	return p.(*probe)
}

func (p *probe) unblock() { p.once.Do(func() { close(p.release) }) }

func init() {
	nodes.Register("test_probe", "test node: counts its runs; payload block blocks, panic panics", func(n *nodes.Node) error {
		params := struct {
			Topic string `yaml:"topic"`
			Depth int    `yaml:"depth"`
			JSON  bool   `yaml:"json"`
		}{Depth: 10}
		if err := n.Params(&params); err != nil {
			return err
		}
		p := probeOf(n.Name())
		opts := []nodes.Option{nodes.Name("probe"), nodes.Depth(params.Depth), nodes.Overflow(subscribers.DropNewest)}
		if params.JSON {
			nodes.Subscribe(n, params.Topic, func(map[string]any) { p.runs.Add(1) }, opts...)
			return nil
		}
		n.Subscribe(params.Topic, func(m subscribers.Message) {
			defer p.runs.Add(1)
			switch string(m.Payload) {
			case "block":
				p.entered <- struct{}{}
				<-p.release
			case "panic":
				panic("probe: panic on demand")
			}
		}, opts...)
		return nil
	})
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the log lines that contain substr.
func (b *syncBuffer) lines(substr string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), substr) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// e2e is a running config against the test's own broker.
type e2e struct {
	a      *App
	broker *broker.Broker
	pub    *mqtt.Client
	logs   *syncBuffer
	base   string // http://host:port of the metrics server, if any
	done   bool
}

// startE2E starts a broker and then the config made of nodes (YAML list
// items), with metrics on a port the kernel picks.
func startE2E(t *testing.T, workers int, nodeYAML string, opts Options) *e2e {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })

	path := filepath.Join(t.TempDir(), "config.yaml")
	cfgText := fmt.Sprintf(`executor:
  workers: %d
mqtt:
  broker: %s
  client_id: e2e-%s
  clean_session: true
  qos: 1
metrics:
  listen: 127.0.0.1:0
nodes:
%s`, workers, b.URL(), strings.ReplaceAll(t.Name(), "/", "-"), nodeYAML)
	require.NoError(t, os.WriteFile(path, []byte(cfgText), 0o644))
	cfg, err := LoadAndCheck(path)
	require.NoError(t, err)
	for _, n := range cfg.Nodes {
		if n.Type == "test_probe" {
			// A fresh probe for each run (go test -count).
			probes.Store(n.Name, newProbe())
		}
	}

	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := Start(context.Background(), cfg, logger, opts)
	require.NoError(t, err)
	x := &e2e{a: a, broker: b, logs: logs, base: "http://" + a.obs.server.Addr().String()}
	t.Cleanup(func() {
		if !x.done {
			x.stop(t)
		}
	})
	pc, err := mqtt.Dial(mqtt.Config{Broker: b.URL(), ClientID: "e2e-pub-" + strings.ReplaceAll(t.Name(), "/", "-"),
		CleanSession: true, StatusTopic: "-", QoS: 1, Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { pc.Close() })
	x.pub = pc
	eventually(t, "the app's and the test's MQTT clients connect", func() bool {
		return a.client.Connected() && pc.Connected()
	})
	return x
}

func (x *e2e) stop(t *testing.T) {
	t.Helper()
	x.done = true
	for _, p := range x.probes() {
		p.unblock()
	}
	require.NoError(t, x.a.stop())
}

func (x *e2e) probes() []*probe {
	var ps []*probe
	for _, n := range x.a.cfg.Nodes {
		if n.Type == "test_probe" {
			ps = append(ps, probeOf(n.Name))
		}
	}
	return ps
}

// publish publishes payload on topic at QoS 1 and waits for the broker's
// acknowledgement.
func (x *e2e) publish(t *testing.T, topic, payload string) {
	t.Helper()
	p, err := x.pub.Publisher(topic, 1, false)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, x.pub.PublishWait(ctx, p.Message([]byte(payload))))
}

// waitBound bounds every wait for something to happen.
const waitBound = 20 * time.Second

// eventually polls cond until it holds, at most waitBound.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, waitBound)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// scrape fetches /metrics and returns each series' value by its name and
// labels as series() writes them.
func (x *e2e) scrape(t *testing.T) map[string]float64 {
	t.Helper()
	code, body := httpGet(t, x.base+"/metrics")
	require.Equal(t, http.StatusOK, code, body)
	out := map[string]float64{}
	for _, l := range strings.Split(body, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		require.Positive(t, i, "exposition line %q", l)
		v, err := strconv.ParseFloat(l[i+1:], 64)
		require.NoError(t, err, "exposition line %q", l)
		out[l[:i]] = v
	}
	return out
}

// series writes a series' name and labels (name=value pairs) as the text
// exposition does: labels sorted by name, a bucket's le last.
func series(name string, labels ...string) string {
	var pairs []string
	le := ""
	for i := 0; i < len(labels); i += 2 {
		if labels[i] == "le" {
			le = fmt.Sprintf("le=%q", labels[i+1])
			continue
		}
		pairs = append(pairs, fmt.Sprintf("%s=%q", labels[i], labels[i+1]))
	}
	slices.Sort(pairs)
	if le != "" {
		pairs = append(pairs, le)
	}
	if len(pairs) == 0 {
		return name
	}
	return name + "{" + strings.Join(pairs, ",") + "}"
}

// metric returns a series' value, failing if it is not exposed.
func (x *e2e) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	key := series(name, labels...)
	v, ok := x.scrape(t)[key]
	require.True(t, ok, "no series %s", key)
	return v
}

// awaitMetric scrapes until cond holds for a series' value.
func (x *e2e) awaitMetric(t *testing.T, cond func(float64) bool, name string, labels ...string) float64 {
	t.Helper()
	var v float64
	eventually(t, "metric "+series(name, labels...), func() bool {
		v = x.metric(t, name, labels...)
		return cond(v)
	})
	return v
}

func (x *e2e) health(t *testing.T) (int, map[string]string) {
	t.Helper()
	code, body := httpGet(t, x.base+"/healthz")
	var h map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &h), body)
	return code, h
}

// TestMetricsEndToEnd scrapes a running config and checks that the values
// move: runs grow the histograms, a full queue counts drops, a panic counts
// a panic, and a broker that goes away shows as disconnected and unhealthy.
func TestMetricsEndToEnd(t *testing.T) {
	t.Parallel()
	x := startE2E(t, 2, `  - name: probe1
    type: test_probe
    params: { topic: e2e/in, depth: 2 }
`, Options{})
	p := probeOf("probe1")
	cb := []string{"node", "probe1", "callback", "probe"}

	code, h := x.health(t)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, map[string]string{"executor": "running", "mqtt": "connected"}, h)
	require.Equal(t, 1.0, x.metric(t, "robotexec_mqtt_connected"))
	require.Equal(t, 0.0, x.metric(t, "robotexec_mqtt_reconnects_total"))
	require.Equal(t, 0.0, x.metric(t, "robotexec_callback_duration_seconds_count", cb...))
	require.Equal(t, 0.0, x.metric(t, "robotexec_queue_depth", cb...))

	t.Run("a callback runs", func(t *testing.T) {
		x.publish(t, "e2e/in", "hello")
		eventually(t, "the probe runs", func() bool { return p.runs.Load() >= 1 })
		x.awaitMetric(t, func(v float64) bool { return v >= 1 }, "robotexec_callback_duration_seconds_count", cb...)
		x.awaitMetric(t, func(v float64) bool { return v >= 1 }, "robotexec_dispatch_latency_seconds_count", cb...)
		require.Equal(t, 1.0, x.metric(t, "robotexec_callback_duration_seconds_bucket", append(cb, "le", "+Inf")...))
	})

	t.Run("a full queue drops", func(t *testing.T) {
		before := x.metric(t, "robotexec_messages_dropped_total", append(cb, "reason", "queue_full")...)
		x.publish(t, "e2e/in", "block")
		select {
		case <-p.entered:
		case <-time.After(waitBound):
			t.Fatal("the blocking message did not start")
		}
		// Depth 2, drop_newest: of five messages while the probe is
		// blocked, three are dropped.
		for i := range 5 {
			x.publish(t, "e2e/in", fmt.Sprint("queued ", i))
		}
		x.awaitMetric(t, func(v float64) bool { return v == before+3 }, "robotexec_messages_dropped_total", append(cb, "reason", "queue_full")...)
		require.Equal(t, 2.0, x.metric(t, "robotexec_queue_depth", cb...))
		p.unblock()
		x.awaitMetric(t, func(v float64) bool { return v == 0 }, "robotexec_queue_depth", cb...)
	})

	t.Run("a panic counts", func(t *testing.T) {
		require.Equal(t, 0.0, x.metric(t, "robotexec_callback_panics_total", cb...))
		x.publish(t, "e2e/in", "panic")
		x.awaitMetric(t, func(v float64) bool { return v == 1 }, "robotexec_callback_panics_total", cb...)
		eventually(t, "the panic is logged", func() bool { return len(x.logs.lines("callback panicked")) == 1 })
	})

	t.Run("the broker stops", func(t *testing.T) {
		require.NoError(t, x.broker.Close())
		x.awaitMetric(t, func(v float64) bool { return v == 0 }, "robotexec_mqtt_connected")
		code, h := x.health(t)
		require.Equal(t, http.StatusServiceUnavailable, code)
		require.Equal(t, map[string]string{"executor": "running", "mqtt": "disconnected"}, h)
	})

	x.stop(t)
	_, err := http.Get(x.base + "/metrics")
	require.Error(t, err, "the metrics server stops with the run")
}

// TestHealthStates follows /healthz through a run's life.
func TestHealthStates(t *testing.T) {
	t.Parallel()
	x := startE2E(t, 1, `  - name: probe_h
    type: test_probe
    params: { topic: e2e/h }
`, Options{})
	code, h := x.health(t)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "running", h["executor"])
	x.a.obs.state.Store(stateStopping)
	code, h = x.health(t)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, map[string]string{"executor": "stopping", "mqtt": "connected"}, h)
	x.a.obs.state.Store(stateRunning)
}

// TestTraceEndToEnd runs a config with tracing on, stops it and checks the
// trace file: one complete event per callback run (the executor's count),
// on the worker tracks, with sane timestamps and no overlap on a track.
func TestTraceEndToEnd(t *testing.T) {
	t.Parallel()
	x := startE2E(t, 2, `  - name: probe_t
    type: test_probe
    params: { topic: e2e/t, depth: 1000 }
  - name: beat
    type: heartbeat
    params: { topic: e2e/beat, period: 5ms }
`, Options{TraceRuns: 100_000})
	p := probeOf("probe_t")
	began := time.Now()
	const msgs = 200
	for i := range msgs {
		x.publish(t, "e2e/t", fmt.Sprint(i))
	}
	eventually(t, "the probe runs every message", func() bool { return p.runs.Load() == msgs })
	x.stop(t)
	elapsed := time.Since(began)

	path := filepath.Join(t.TempDir(), "trace.json")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, x.a.WriteTrace(f))
	data, err := os.ReadFile(path)
	require.NoError(t, err)

	s, err := tracecheck.ChromeTrace(bytes.NewReader(data))
	require.NoError(t, err)
	runs := x.a.ex.Stats().Runs
	require.Equal(t, int(runs), s.Runs, "one complete event per run")
	var probeID, beatID uint64
	for _, cb := range x.a.ex.Callbacks() {
		switch cb.Owner {
		case "probe_t":
			probeID = cb.Subscription.ID()
		case "beat":
			beatID = cb.Timer.ID()
		}
	}
	require.Equal(t, msgs, s.PerEntity[probeID], "one event per message")
	require.Positive(t, s.PerEntity[beatID], "the heartbeat's timer ran")
	require.Equal(t, map[int]string{1: "worker 0", 2: "worker 1"}, s.Threads)
	for tid := range s.PerTrack {
		require.Contains(t, s.Threads, tid, "runs on the worker tracks only")
	}
	require.Less(t, s.Last-s.First, int64(elapsed)+int64(time.Second), "the runs span the run, not more")

	// Independently of Check: the raw events.
	var doc struct {
		DisplayTimeUnit string           `json:"displayTimeUnit"`
		TraceEvents     []map[string]any `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Equal(t, "ms", doc.DisplayTimeUnit)
	n := 0
	for _, ev := range doc.TraceEvents {
		if ev["ph"] != "X" {
			continue
		}
		n++
		for _, k := range []string{"ts", "dur", "pid", "tid"} {
			v, ok := ev[k].(float64)
			require.True(t, ok, "%s of %v is a number", k, ev)
			require.GreaterOrEqual(t, v, 0.0)
		}
		require.EqualValues(t, os.Getpid(), ev["pid"])
		args := ev["args"].(map[string]any)
		if args["node"] == "probe_t" {
			require.Equal(t, "probe", args["callback"])
			require.Equal(t, "probe_t: probe", ev["name"])
			require.Equal(t, "subscription", ev["cat"])
			lat, ok := args["latency_us"].(float64)
			require.True(t, ok, "a message's run has its dispatch latency: %v", ev)
			require.GreaterOrEqual(t, lat, 0.0)
		}
	}
	require.Equal(t, int(runs), n)
}

// TestLogFloods checks that floods of errors give a bounded number of log
// lines, each later one counting what it suppressed: panics (the
// executor's log) and payloads that do not decode (the node's).
func TestLogFloods(t *testing.T) {
	t.Parallel()
	x := startE2E(t, 2, `  - name: probe_p
    type: test_probe
    params: { topic: e2e/p, depth: 1000 }
  - name: probe_j
    type: test_probe
    params: { topic: e2e/j, depth: 1000, json: true }
`, Options{})
	cbP := []string{"node", "probe_p", "callback", "probe"}
	cbJ := []string{"node", "probe_j", "callback", "probe"}
	const flood = 300
	began := time.Now()
	for range flood {
		x.publish(t, "e2e/p", "panic")
		x.publish(t, "e2e/j", "not json")
	}
	x.awaitMetric(t, func(v float64) bool { return v == flood }, "robotexec_callback_panics_total", cbP...)
	x.awaitMetric(t, func(v float64) bool { return v == flood }, "robotexec_messages_dropped_total", append(cbJ, "reason", "malformed")...)
	// At most one line a second for each, and one to start.
	bound := int(time.Since(began)/time.Second) + 1
	panics := x.logs.lines("callback panicked")
	decodes := x.logs.lines("payload does not decode")
	require.NotEmpty(t, panics)
	require.NotEmpty(t, decodes)
	require.LessOrEqual(t, len(panics), bound, "panic lines")
	require.LessOrEqual(t, len(decodes), bound, "decode lines")

	// Every message was handled by now, so every line was let through
	// by now, give or take the time to write it; a second later (the
	// limiters' interval, plus a margin for that) the next one goes out
	// too and says how many were held back: every message is then
	// accounted for.
	time.Sleep(time.Second + 500*time.Millisecond) // ratelog.LimitFloods lets one line a second through
	x.publish(t, "e2e/p", "panic")
	x.publish(t, "e2e/j", "not json")
	eventually(t, "every panic logged or counted as suppressed", func() bool {
		return logged(t, x.logs.lines("callback panicked")) == flood+1
	})
	eventually(t, "every decode error logged or counted as suppressed", func() bool {
		return logged(t, x.logs.lines("payload does not decode")) == flood+1
	})
	require.Contains(t, strings.Join(x.logs.lines("callback panicked"), "\n"), "suppressed=")
	require.Contains(t, strings.Join(x.logs.lines("payload does not decode"), "\n"), "suppressed=")
}

// logged returns the number of events lines stand for: one each, plus the
// ones each says it suppressed.
func logged(t *testing.T, lines []string) int {
	t.Helper()
	n := 0
	for _, l := range lines {
		n++
		if _, rest, ok := strings.Cut(l, " suppressed="); ok {
			k, err := strconv.Atoi(strings.Fields(rest)[0])
			require.NoError(t, err, l)
			n += k
		}
	}
	return n
}

// TestMetricsListenInUse: a metrics address that cannot be bound fails the
// start before anything runs.
func TestMetricsListenInUse(t *testing.T) {
	t.Parallel()
	busy := startE2E(t, 1, `  - name: probe_b
    type: test_probe
    params: { topic: e2e/b }
`, Options{})
	addr := busy.a.obs.server.Addr().String()
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf("mqtt:\n  listen: 127.0.0.1:0\nmetrics:\n  listen: %s\n", addr)), 0o644))
	cfg, err := LoadAndCheck(path)
	require.NoError(t, err)
	_, err = Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{})
	require.ErrorContains(t, err, "metrics.listen: metrics: listen on "+addr)
	require.ErrorContains(t, err, "address already in use")
}
