package app

// End-to-end tests of observability on the real wiring, in process: start
// and stop as robotexec run does, against an embedded broker of the
// test's own that it can close, with metrics served on a free port and
// scraped over HTTP. A test-only node type, test_probe, counts its runs,
// blocks or panics on demand.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/tracecheck"
	_ "github.com/robotexec/robotexec/nodes/builtin" // heartbeat
)

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
