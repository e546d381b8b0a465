package cli

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/robotexec/robotexec/internal/metrics"
)

// liveStats are a callback's figures from its instance's /metrics.
type liveStats struct {
	Runs    uint64  `json:"runs"`
	P50S    float64 `json:"dispatch_latency_p50_s"`
	P99S    float64 `json:"dispatch_latency_p99_s"`
	Dropped uint64  `json:"dropped"`
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
	for _, s := range metrics.Summarize(fams) {
		out[cbKey{s.Node, s.Callback}] = &liveStats{Runs: s.Runs, P50S: s.P50S, P99S: s.P99S, Dropped: s.Dropped}
	}
	return out, nil
}
