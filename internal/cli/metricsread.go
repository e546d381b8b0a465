package cli

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// liveStats are a callback's figures from its instance's /metrics.
type liveStats struct {
	Runs     uint64  `json:"runs"`
	P50S     float64 `json:"dispatch_latency_p50_s"`
	P99S     float64 `json:"dispatch_latency_p99_s"`
	Dropped  uint64  `json:"dropped"`
	hasStats bool
}

// cbKey names a callback in the metrics' labels.
type cbKey struct{ node, callback string }

// scrapeStats reads url (an instance's /metrics) and returns each
// callback's runs, dispatch latency quantiles and drops.
func scrapeStats(ctx context.Context, url string) (map[cbKey]*liveStats, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	out := map[cbKey]*liveStats{}
	get := func(m *dto.Metric) *liveStats {
		k := cbKey{label(m, "node"), label(m, "callback")}
		s := out[k]
		if s == nil {
			s = &liveStats{hasStats: true}
			out[k] = s
		}
		return s
	}
	for _, m := range fams["robotexec_callback_duration_seconds"].GetMetric() {
		get(m).Runs = m.GetHistogram().GetSampleCount()
	}
	for _, m := range fams["robotexec_dispatch_latency_seconds"].GetMetric() {
		s := get(m)
		s.P50S, s.P99S = quantile(m.GetHistogram(), 0.5), quantile(m.GetHistogram(), 0.99)
	}
	for _, m := range fams["robotexec_messages_dropped_total"].GetMetric() {
		get(m).Dropped += uint64(m.GetCounter().GetValue())
	}
	return out, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// quantile estimates the q quantile of a histogram as Prometheus's
// histogram_quantile does: linear within the bucket that holds it; 0
// without samples.
func quantile(h *dto.Histogram, q float64) float64 {
	n := float64(h.GetSampleCount())
	if n == 0 {
		return 0
	}
	bs := h.GetBucket()
	sort.Slice(bs, func(i, j int) bool { return bs[i].GetUpperBound() < bs[j].GetUpperBound() })
	rank := q * n
	lo, below := 0.0, 0.0
	for _, b := range bs {
		hi, c := b.GetUpperBound(), float64(b.GetCumulativeCount())
		if c >= rank {
			if math.IsInf(hi, 1) || c == below {
				return lo
			}
			return lo + (hi-lo)*(rank-below)/(c-below)
		}
		lo, below = hi, c
	}
	return lo
}
