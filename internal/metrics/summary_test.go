package metrics_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/metrics"
)

// TestSummaryHandler: the JSON summary has each callback's runs, dispatch
// latency quantiles (as histogram_quantile estimates them) and drops
// summed over the reasons; the MQTT client's own drops are no callback's.
func TestSummaryHandler(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	cb := []string{"node", "callback"}
	dur := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "robotexec_callback_duration_seconds"}, cb)
	lat := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "robotexec_dispatch_latency_seconds", Buckets: []float64{0.001, 0.002, 0.004}}, cb)
	drop := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "robotexec_messages_dropped_total"}, append(cb, "reason"))
	reg.MustRegister(dur, lat, drop)
	for range 100 {
		dur.WithLabelValues("imu0", "tick").Observe(0.0001)
	}
	for i := range 100 {
		lat.WithLabelValues("imu0", "tick").Observe(0.0015 + float64(i/99)*0.001) // 99 in (1,2] ms, 1 in (2,4] ms
	}
	dur.WithLabelValues("filter", "on_imu").Observe(0.0001)
	drop.WithLabelValues("filter", "on_imu", "queue_full").Add(3)
	drop.WithLabelValues("filter", "on_imu", "too_large").Add(2)
	drop.WithLabelValues("", "", "unrouted").Add(7)

	rec := httptest.NewRecorder()
	metrics.SummaryHandler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/stats.json", nil))
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var got struct{ Callbacks []metrics.CallbackSummary }
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), "%s", rec.Body)
	require.Len(t, got.Callbacks, 2, "%s", rec.Body)
	require.Equal(t, metrics.CallbackSummary{Node: "filter", Callback: "on_imu", Runs: 1, Dropped: 5}, got.Callbacks[0])
	imu := got.Callbacks[1]
	require.Equal(t, "imu0", imu.Node)
	require.Equal(t, uint64(100), imu.Runs)
	require.InDelta(t, 0.001+0.001*(50.0/99), imu.P50S, 1e-9)
	require.InDelta(t, 0.002, imu.P99S, 1e-9)
}
