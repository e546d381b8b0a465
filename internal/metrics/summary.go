package metrics

import (
	"cmp"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"sort"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// CallbackSummary is one callback's figures in the metrics: the
// callback's runs, the quantiles of its dispatch latency and the
// messages its subscription dropped.
type CallbackSummary struct {
	Node     string  `json:"node"`
	Callback string  `json:"callback"`
	Runs     uint64  `json:"runs"`
	P50S     float64 `json:"dispatch_latency_p50_s"`
	P99S     float64 `json:"dispatch_latency_p99_s"`
	Dropped  uint64  `json:"dropped"`
}

// Summarize returns each callback's figures in fams (the metric families
// by name, as a registry gathers them or a scrape of /metrics parses),
// sorted by node and callback. The MQTT client's own drops, which name no
// callback, are not a callback's.
func Summarize(fams map[string]*dto.MetricFamily) []CallbackSummary {
	byKey := map[[2]string]*CallbackSummary{}
	get := func(m *dto.Metric) *CallbackSummary {
		k := [2]string{labelOf(m, "node"), labelOf(m, "callback")}
		s := byKey[k]
		if s == nil {
			s = &CallbackSummary{Node: k[0], Callback: k[1]}
			byKey[k] = s
		}
		return s
	}
	for _, m := range fams["robotexec_callback_duration_seconds"].GetMetric() {
		get(m).Runs = m.GetHistogram().GetSampleCount()
	}
	for _, m := range fams["robotexec_dispatch_latency_seconds"].GetMetric() {
		s := get(m)
		s.P50S, s.P99S = Quantile(m.GetHistogram(), 0.5), Quantile(m.GetHistogram(), 0.99)
	}
	for _, m := range fams["robotexec_messages_dropped_total"].GetMetric() {
		if labelOf(m, "callback") != "" {
			get(m).Dropped += uint64(m.GetCounter().GetValue())
		}
	}
	out := make([]CallbackSummary, 0, len(byKey))
	for _, s := range byKey {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b CallbackSummary) int {
		return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Callback, b.Callback))
	})
	return out
}

func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Quantile estimates the q quantile of a histogram as Prometheus's
// histogram_quantile does: linear within the bucket that holds it; 0
// without samples.
func Quantile(h *dto.Histogram, q float64) float64 {
	n := float64(h.GetSampleCount())
	if n == 0 {
		return 0
	}
	bs := slices.Clone(h.GetBucket())
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

// SummaryHandler returns the HTTP handler of a JSON summary of g's
// callbacks: {"callbacks": [CallbackSummary...]}, gathered at each
// request. A gathering that fails in part still answers with what it
// gathered.
func SummaryHandler(g prometheus.Gatherer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		list, _ := g.Gather() // partial results come with the error
		fams := make(map[string]*dto.MetricFamily, len(list))
		for _, f := range list {
			fams[f.GetName()] = f
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(struct {
			Callbacks []CallbackSummary `json:"callbacks"`
		}{Summarize(fams)})
	})
}
