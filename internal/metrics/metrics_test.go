package metrics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/metrics"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/observers"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// fakeMQTT is an MQTT client's stats.
type fakeMQTT struct{ st mqtt.Stats }

func (f *fakeMQTT) Stats() mqtt.Stats { return f.st }

// rig is an executor on a simulated clock, spun by hand, with Runs and a
// collector.
type rig struct {
	ex    *executor.Executor
	runs  *observers.Runs
	bus   *subscribers.Router
	clock *timers.Sim
	mq    *fakeMQTT
	reg   *prometheus.Registry
}

func newRig(t *testing.T) *rig {
	t.Helper()
	runs := observers.New(observers.Options{Workers: 1})
	clock := timers.NewSim(time.Unix(1000, 0))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ex := executor.New(executor.Options{Workers: 1, Runs: runs, Stamp: runs.Stamp, Clock: clock, Logger: quiet})
	r := &rig{ex: ex, runs: runs, bus: new(subscribers.Router), clock: clock, mq: &fakeMQTT{}}
	r.reg = prometheus.NewRegistry()
	r.reg.MustRegister(metrics.NewCollector(metrics.Sources{Executor: ex, Runs: runs, MQTT: r.mq}))
	return r
}

// value returns the value of the series of name whose labels are labels
// (name=value pairs, in any order), and whether it exists. Histograms
// give their sample count.
func (r *rig) value(t *testing.T, name string, labels ...string) (float64, bool) {
	t.Helper()
	fams, err := r.reg.Gather()
	require.NoError(t, err)
	want := map[string]string{}
	for i := 0; i < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !sameLabels(m.GetLabel(), want) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount()), true
			}
		}
	}
	return 0, false
}

// sameLabels compares labels as Prometheus does: an empty value is no
// label.
func sameLabels(got []*dto.LabelPair, want map[string]string) bool {
	n := 0
	for _, l := range got {
		if l.GetValue() == "" {
			continue
		}
		if want[l.GetName()] != l.GetValue() {
			return false
		}
		n++
	}
	return n == len(want)
}

func (r *rig) require(t *testing.T, want float64, name string, labels ...string) {
	t.Helper()
	v, ok := r.value(t, name, labels...)
	require.True(t, ok, "no series %s %v", name, labels)
	require.Equal(t, want, v, "%s %v", name, labels)
}

func TestCollector(t *testing.T) {
	r := newRig(t)
	node := r.ex.NewOwner("imu", nil)
	_, err := node.Subscribe(r.bus, "in", func(ctx context.Context, m subscribers.Message) {
		if string(m.Payload) == "panic" {
			panic("boom")
		}
	}, executor.Name("input"), executor.Depth(2), executor.Overflow(subscribers.DropNewest))
	require.NoError(t, err)
	// A second callback with the same names shares the series.
	_, err = node.Subscribe(r.bus, "in2", func(ctx context.Context, _ subscribers.Message) {}, executor.Name("input"))
	require.NoError(t, err)
	_, err = node.Timer(10*time.Millisecond, func(ctx context.Context, _ timers.Event) {}, executor.Name("tick"))
	require.NoError(t, err)
	r.runs.Register(r.ex)

	cb := []string{"node", "imu", "callback", "input"}
	r.require(t, 0, "robotexec_callback_duration_seconds", cb...)
	r.require(t, 0, "robotexec_queue_depth", cb...)

	pub, _ := r.bus.Publisher("in")
	pub2, _ := r.bus.Publisher("in2")
	pub.Publish(context.Background(), []byte("panic"))
	pub.Publish(context.Background(), []byte("ok"))
	pub.Publish(context.Background(), []byte("dropped")) // depth 2, drop_newest
	pub2.Publish(context.Background(), []byte("ok"))
	r.require(t, 3, "robotexec_queue_depth", cb...)
	r.require(t, 1, "robotexec_messages_dropped_total", append(cb, "reason", "queue_full")...)
	r.require(t, 0, "robotexec_messages_dropped_total", append(cb, "reason", "malformed")...)

	require.Equal(t, 3, r.ex.SpinAll())
	r.require(t, 3, "robotexec_callback_duration_seconds", cb...)
	r.require(t, 3, "robotexec_dispatch_latency_seconds", cb...)
	r.require(t, 1, "robotexec_callback_panics_total", cb...)
	r.require(t, 0, "robotexec_queue_depth", cb...)

	// The timer falls due, then 3.5 periods pass before it runs: it
	// skips 3 deadlines.
	r.clock.Advance(45 * time.Millisecond)
	require.Equal(t, 1, r.ex.SpinAll())
	tick := []string{"node", "imu", "callback", "tick"}
	r.require(t, 3, "robotexec_timer_missed_ticks_total", tick...)
	r.require(t, 1, "robotexec_callback_duration_seconds", tick...)
	r.require(t, 1, "robotexec_dispatch_latency_seconds", tick...)
	r.require(t, 0, "robotexec_callback_panics_total", tick...)
	_, ok := r.value(t, "robotexec_queue_depth", tick...)
	require.False(t, ok, "a timer has no queue")

	r.mq.st = mqtt.Stats{Connected: true, Reconnects: 2, Received: 9, Published: 8, PublishFailed: 7,
		Dropped: map[subscribers.Reason]uint64{subscribers.TooLarge: 3, subscribers.QueueFull: 4, subscribers.Unrouted: 5},
		Refused: map[mqtt.Reason]uint64{mqtt.NotAuthorized: 6, mqtt.QuotaExceeded: 2}}
	r.require(t, 1, "robotexec_mqtt_connected")
	r.require(t, 2, "robotexec_mqtt_reconnects_total")
	r.require(t, 9, "robotexec_mqtt_messages_received_total")
	r.require(t, 8, "robotexec_mqtt_messages_published_total")
	r.require(t, 7, "robotexec_mqtt_publish_failures_total")
	r.require(t, 3, "robotexec_messages_dropped_total", "reason", "too_large")
	r.require(t, 4, "robotexec_messages_dropped_total", "reason", "queue_full")
	r.require(t, 5, "robotexec_messages_dropped_total", "reason", "unrouted")
	r.require(t, 6, "robotexec_mqtt_refused_total", "reason", "not_authorized")
	r.require(t, 2, "robotexec_mqtt_refused_total", "reason", "quota_exceeded")
	r.mq.st.Connected = false
	r.require(t, 0, "robotexec_mqtt_connected")

	problems, err := testutil.GatherAndLint(r.reg)
	require.NoError(t, err)
	require.Empty(t, problems)
}

func TestHistogramBuckets(t *testing.T) {
	r := newRig(t)
	_, err := r.ex.NewOwner("n", nil).Subscribe(r.bus, "in", func(ctx context.Context, m subscribers.Message) {
		if string(m.Payload) == "slow" {
			time.Sleep(3 * time.Millisecond)
		}
	}, executor.Name("cb"))
	require.NoError(t, err)
	pub, _ := r.bus.Publisher("in")
	pub.Publish(context.Background(), []byte("slow"))
	require.Equal(t, 1, r.ex.SpinAll())

	fams, err := r.reg.Gather()
	require.NoError(t, err)
	var h *dto.Histogram
	for _, f := range fams {
		if f.GetName() == "robotexec_callback_duration_seconds" {
			h = f.GetMetric()[0].GetHistogram()
		}
	}
	require.NotNil(t, h)
	require.Equal(t, uint64(1), h.GetSampleCount())
	require.GreaterOrEqual(t, h.GetSampleSum(), 0.003)
	bs := h.GetBucket()
	require.Len(t, bs, observers.Buckets)
	require.InDelta(t, 1e-6, bs[0].GetUpperBound(), 1e-15, "microsecond resolution")
	for _, b := range bs {
		// Cumulative: 0 up to the bucket of 3 ms, 1 from (2.048 ms,
		// 4.096 ms] on, or later on a loaded machine.
		if b.GetUpperBound() < 0.003 {
			require.Zero(t, b.GetCumulativeCount(), "le=%g", b.GetUpperBound())
		}
		if b.GetUpperBound() > 1 {
			require.Equal(t, uint64(1), b.GetCumulativeCount(), "le=%g", b.GetUpperBound())
		}
	}
}

func TestCollectorWithoutRunsOrMQTT(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 1})
	_, err := ex.NewOwner("n", nil).Subscribe(new(subscribers.Router), "in", func(ctx context.Context, _ subscribers.Message) {})
	require.NoError(t, err)
	c := metrics.NewCollector(metrics.Sources{Executor: ex})
	// Panics, queue depth and seven drop reasons; no histograms, no MQTT.
	require.Equal(t, 9, testutil.CollectAndCount(c))
	require.Equal(t, 0, testutil.CollectAndCount(metrics.NewCollector(metrics.Sources{})))
}

func get(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body), resp.Header
}

func TestServer(t *testing.T) {
	r := newRig(t)
	_, err := r.ex.NewOwner("n", nil).Subscribe(r.bus, "in", func(ctx context.Context, _ subscribers.Message) {}, executor.Name("cb"))
	require.NoError(t, err)
	health := metrics.Health{Executor: "running", MQTT: "connected"}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := metrics.Listen("127.0.0.1:0")
	require.NoError(t, err)
	srv.Serve(metrics.Handler(r.reg, func() metrics.Health { return health }, logger))
	srv.Serve(http.NotFoundHandler()) // no effect
	base := "http://" + srv.Addr().String()

	code, body, hdr := get(t, base+"/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `robotexec_callback_duration_seconds_bucket{callback="cb",node="n",le="1e-06"} 0`)
	require.Contains(t, body, "# TYPE robotexec_messages_dropped_total counter")
	require.Contains(t, hdr.Get("Content-Type"), "text/plain")

	code, body, hdr = get(t, base+"/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "application/json", hdr.Get("Content-Type"))
	require.JSONEq(t, `{"executor":"running","mqtt":"connected"}`, body)

	for _, h := range []metrics.Health{{"running", "disconnected"}, {"stopping", "connected"}, {"starting", "disconnected"}} {
		health = h
		code, body, _ = get(t, base+"/healthz")
		require.Equal(t, http.StatusServiceUnavailable, code, "%+v", h)
		var got metrics.Health
		require.NoError(t, json.Unmarshal([]byte(body), &got))
		require.Equal(t, h, got)
	}

	code, body, _ = get(t, base+"/debug/pprof/")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "goroutine")
	code, _, _ = get(t, base+"/debug/pprof/cmdline")
	require.Equal(t, http.StatusOK, code)
	code, _, _ = get(t, base+"/nothing")
	require.Equal(t, http.StatusNotFound, code)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, srv.Shutdown(ctx))
	_, err = http.Get(base + "/metrics")
	require.Error(t, err, "not listening any more")
}

func TestListenError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	_, err = metrics.Listen(l.Addr().String())
	require.ErrorContains(t, err, fmt.Sprintf("metrics: listen on %s", l.Addr()))
	require.ErrorContains(t, err, "address already in use")
	_, err = metrics.Listen("not-an-address")
	require.Error(t, err)
}

func TestShutdownWithoutServe(t *testing.T) {
	srv, err := metrics.Listen("127.0.0.1:0")
	require.NoError(t, err)
	addr := srv.Addr().String()
	require.NoError(t, srv.Shutdown(context.Background()))
	require.NoError(t, srv.Shutdown(context.Background()), "twice")
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err, "the port is free again")
	l.Close()
}

func TestNewRegistry(t *testing.T) {
	reg := metrics.NewRegistry(metrics.NewCollector(metrics.Sources{}))
	fams, err := reg.Gather()
	require.NoError(t, err)
	var names []string
	for _, f := range fams {
		names = append(names, f.GetName())
	}
	joined := strings.Join(names, " ")
	require.Contains(t, joined, "go_goroutines")
	require.Contains(t, joined, "process_")
}
