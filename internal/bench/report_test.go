package bench_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bench"
)

var (
	atLeastHalf = &bench.Target{Of: "ratio", Op: ">=", Bound: 0.5}
	atMostTwo   = &bench.Target{Of: "ratio", Op: "<=", Bound: 2}
	zero        = &bench.Target{Of: "value", Op: "==", Bound: 0}
)

func TestTarget(t *testing.T) {
	tests := []struct {
		t      *bench.Target
		x      float64
		holds  bool
		String string
	}{
		{atLeastHalf, 0.5, true, "≥0.5"},
		{atLeastHalf, 0.49, false, "≥0.5"},
		{atMostTwo, 2, true, "≤2.0"},
		{atMostTwo, 2.01, false, "≤2.0"},
		{&bench.Target{Of: "ratio", Op: "<=", Bound: 1.2}, 1.1, true, "≤1.2"},
		{zero, 0.0004, true, "=0"}, // prints as 0.000
		{zero, 0.001, false, "=0"},
		{&bench.Target{Of: "ratio", Op: "~", Bound: 1}, 1, false, "1.0"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.holds, tt.t.Holds(tt.x), "%s holds for %v", tt.String, tt.x)
		require.Equal(t, tt.String, tt.t.String())
	}
}

func TestNewMetric(t *testing.T) {
	spec := bench.Spec{Name: "dispatch throughput (cb/s)", Unit: "cb/s", BaselineName: "chan pool", Target: atLeastHalf}
	m := bench.NewMetric(spec, []float64{4, 6, 5}, []float64{10, 10, 12})
	require.Empty(t, m.Error)
	require.Equal(t, 5.0, m.Value, "median of robotexec's")
	require.Equal(t, 10.0, m.Baseline, "median of the baseline's")
	require.NotNil(t, m.Ratio)
	require.InDelta(t, 0.5, *m.Ratio, 1e-12, "ratio of the medians")
	require.Equal(t, 3, m.Repeats)
	// The pairs' ratios: 4/10, 6/10, 5/12.
	r := m.Spread.Ratio
	require.Equal(t, 3, r.N)
	require.InDelta(t, 5.0/12, r.Median, 1e-12)
	require.InDelta(t, 0.4, r.Min, 1e-12)
	require.InDelta(t, 0.6, r.Max, 1e-12)
	require.InDelta(t, (0.4+5.0/12)/2, r.Q1, 1e-12)
	require.InDelta(t, (5.0/12+0.6)/2, r.Q3, 1e-12)
	require.Equal(t, 4.0, m.Spread.Value.Min)
	require.Equal(t, 12.0, m.Spread.Baseline.Max)
	require.NotNil(t, m.OK)
	require.True(t, *m.OK)
	require.Equal(t, []float64{4, 6, 5}, m.Samples.Value)

	missed := bench.NewMetric(spec, []float64{4}, []float64{10})
	require.False(t, *missed.OK)

	// A value target holds on the value, whatever the ratio.
	allocs := bench.NewMetric(bench.Spec{Name: "allocs", Target: zero}, []float64{0, 0}, []float64{0, 0})
	require.Nil(t, allocs.Ratio, "no ratio over a zero baseline")
	require.True(t, *allocs.OK)

	// A ratio target without a ratio is not judged.
	noBase := bench.NewMetric(spec, []float64{3}, nil)
	require.Nil(t, noBase.Ratio)
	require.Nil(t, noBase.OK)
	require.Equal(t, []float64{}, noBase.Samples.Baseline, "empty, not null, in JSON")

	noTarget := bench.NewMetric(bench.Spec{Name: "bytes"}, []float64{3}, []float64{2})
	require.Nil(t, noTarget.OK)
	require.InDelta(t, 1.5, *noTarget.Ratio, 1e-12)

	nan := bench.NewMetric(spec, []float64{math.NaN()}, []float64{1})
	require.NotEmpty(t, nan.Error)
	require.Zero(t, nan.Value)
	require.Nil(t, nan.OK)

	failed := bench.Failed(spec, errors.New("broker: address in use"))
	require.Equal(t, "broker: address in use", failed.Error)
	require.Equal(t, spec.Name, failed.Name)

	notMeasured := bench.NotMeasured(spec, "install mosquitto")
	require.Empty(t, notMeasured.Error, "not measured is not a failure")
	require.Equal(t, "install mosquitto", notMeasured.NotMeasured)
	require.Nil(t, notMeasured.OK)
}

func TestUnsteady(t *testing.T) {
	spec := bench.Spec{Name: "dispatch throughput (cb/s)", Unit: "cb/s", BaselineName: "chan pool", Target: atLeastHalf}
	tests := []struct {
		name              string
		values, baselines []float64
		unsteady          bool
		valueMark         string
		baseMark          string
	}{
		{"steady", []float64{7e6, 7.5e6, 8e6}, []float64{20e6, 22e6, 24e6}, false, "", ""},
		{"exactly 1.5x is steady", []float64{10e6, 15e6, 12e6}, []float64{20e6, 20e6, 20e6}, false, "", ""},
		{"two modes of robotexec", []float64{7e6, 16e6, 7.2e6, 6.9e6, 7.1e6}, []float64{20e6, 20e6, 21e6, 22e6, 20e6}, true, " ×2.32!", ""},
		{"a disturbed baseline", []float64{7e6, 7e6}, []float64{10e6, 24e6}, true, "", " ×2.40!"},
		{"one repetition says nothing", []float64{7e6}, []float64{24e6}, false, "", ""},
		{"zeros say nothing", []float64{0, 3}, []float64{0, 0}, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := bench.NewMetric(spec, tt.values, tt.baselines)
			require.Equal(t, tt.unsteady, m.Unsteady)
			var b bytes.Buffer
			rep := &bench.Report{Metrics: []bench.Metric{m}, Repeat: len(tt.values)}
			require.NoError(t, rep.WriteTable(&b))
			row := strings.Split(b.String(), "\n")[1]
			cells := strings.Split(row, "  ") // the name, robotexec's cell, ...
			require.Equal(t, tt.valueMark != "", strings.HasSuffix(cells[1], "!"), "robotexec's cell of %q", row)
			if tt.valueMark != "" {
				require.True(t, strings.HasSuffix(cells[1], tt.valueMark), "robotexec's cell of %q", row)
			}
			if tt.baseMark != "" {
				require.Contains(t, row, tt.baseMark+" (chan pool)", "the baseline's cell of %q", row)
			}
			require.Equal(t, tt.unsteady, strings.Contains(row, "!"), "a mark in %q", row)
			require.Equal(t, tt.unsteady, strings.Contains(b.String(), "\nUNSTEADY (repetitions differ by more than 1.5x, marked ×N!): dispatch throughput;"),
				"the footer names the row")
		})
	}
}

func TestFormatNumber(t *testing.T) {
	tests := []struct {
		x    float64
		want string
	}{
		{0, "0"}, {0.0004, "0.000"}, {0.1234, "0.123"}, {0.99951, "1.00"}, {1.234, "1.23"},
		{9.996, "10.0"}, {12.34, "12.3"}, {99.96, "100"}, {812.4, "812"}, {1105, "1105"},
		{9999, "9999"}, {48_213, "48.2k"}, {999_999, "1000k"}, {4_912_345, "4.91M"},
		{24_100_000, "24.1M"}, {3.2e9, "3.20G"}, {-1.5, "-1.50"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, bench.FormatNumber(tt.x), "%v", tt.x)
	}
}

// sample is a report with each kind of row.
func sample() *bench.Report {
	ms := []bench.Metric{
		bench.NewMetric(bench.Spec{Name: "dispatch throughput (cb/s)", Unit: "cb/s", BaselineName: "chan pool", Target: atLeastHalf},
			[]float64{4.8e6, 5e6, 5.2e6}, []float64{24e6, 25e6, 26e6}),
		bench.NewMetric(bench.Spec{Name: "dispatch latency p99 (us)", Unit: "us", BaselineName: "chan pool", Target: atMostTwo},
			[]float64{12, 14, 13}, []float64{10, 10, 10}),
		bench.NewMetric(bench.Spec{Name: "allocs per event (in-process)", Unit: "allocs/event", BaselineName: "chan pool", Target: zero},
			[]float64{0, 0, 0}, []float64{0, 0, 0}),
		bench.NewMetric(bench.Spec{Name: "bytes per timer", Unit: "B", BaselineName: "time.AfterFunc"}, []float64{258}, []float64{137}),
		bench.Failed(bench.Spec{Name: "mqtt bridge msgs/s", Unit: "msgs/s", BaselineName: "raw paho", Target: &bench.Target{Of: "ratio", Op: ">=", Bound: 0.8}},
			errors.New("no broker")),
		bench.NewMetric(bench.Spec{Name: "dispatch latency p50 (us)", Unit: "us", BaselineName: "chan pool"},
			[]float64{0.5, 0.8, 950}, []float64{0.3, 0.3, 0.3}),
		bench.NotMeasured(bench.Spec{Name: "mqtt bridge via mosquitto (msgs/s)", Unit: "msgs/s", BaselineName: "raw paho", Target: &bench.Target{Of: "ratio", Op: ">=", Bound: 0.8}},
			"install mosquitto"),
	}
	ms[1].Note = "at 2.5M events/s"
	ms[1].Figures = []bench.Figure{bench.NewFigure("p50", "us", []float64{3, 1, 2})}
	return &bench.Report{
		Metrics: ms,
		Machine: bench.Machine{CPUs: 2, GOMAXPROCS: 2, Go: "go1.26.8", OS: "linux", Arch: "amd64", LoadBefore: "0.10 0.20 0.30", LoadAfter: "1.00 0.50 0.40"},
		Workers: 2, Repeat: 3, Budget: "2m0s", Elapsed: "1m58s",
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sample().WriteTable(&b))
	out := b.String()
	lines := strings.Split(out, "\n")
	require.Regexp(t, `^metric +robotexec +baseline +ratio +target$`, lines[0])
	// Each row is aligned on the header's columns.
	col := strings.Index(lines[0], "robotexec")
	for _, l := range lines[1:5] {
		require.Equal(t, " ", l[col-1:col], "row %q is aligned", l)
	}
	require.Regexp(t, `(?m)^dispatch throughput \(cb/s\) +5\.00M ±4% +25\.0M ±4% \(chan pool\) +0\.200 \(0\.200–0\.200\) +≥0\.5 MISSED$`, out)
	require.Regexp(t, `(?m)^dispatch latency p99 \(us\) +13\.0 ±8% +10\.0 \(chan pool\) +1\.30 \(1\.20–1\.40\) +≤2\.0 ok$`, out)
	require.Regexp(t, `(?m)^allocs per event \(in-process\) +0 +0 \(chan pool\) +- +value =0 ok$`, out)
	require.Regexp(t, `(?m)^bytes per timer +258 +137 \(time\.AfterFunc\) +1\.88 +-$`, out)
	require.Regexp(t, `(?m)^mqtt bridge msgs/s +error: no broker +≥0\.8 \?$`, out)
	require.Regexp(t, `(?m)^mqtt bridge via mosquitto \(msgs/s\) +not measured: install mosquitto +≥0\.8 \?$`, out)
	require.Regexp(t, `(?m)^dispatch latency p50 \(us\) +0\.800 \[0\.500–950\] ×1900! +0\.300 \(chan pool\) +2\.67 \(1\.67–3167\) +-$`, out,
		"a spread over ±50% shows as the range, and a swing over 1.5x is marked")
	require.Contains(t, out, "\nUNSTEADY (repetitions differ by more than 1.5x, marked ×N!): dispatch latency p50; their medians are not one speed.\n",
		"only the row that swings is named")
	require.Contains(t, out, "2 CPUs (GOMAXPROCS 2), go1.26.8 linux/amd64; 2 workers; median of 3 repetitions")
	require.Contains(t, out, "\nload average (1, 5, 15 min): 0.10 0.20 0.30 at the start, 1.00 0.50 0.40 at the end.\n")
	require.Contains(t, out, "\ndispatch latency p99: at 2.5M events/s\n", "notes name the metric without its unit")
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sample().WriteJSON(&b))
	require.True(t, json.Valid(b.Bytes()))

	// The shape of bench -json: {"metrics":[{"name","value","baseline","ratio","unit"}]}.
	var doc struct {
		Metrics []map[string]any `json:"metrics"`
		Machine map[string]any   `json:"machine"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	require.Len(t, doc.Metrics, 7)
	require.Equal(t, "install mosquitto", doc.Metrics[6]["not_measured"])
	require.NotContains(t, doc.Metrics[6], "error", "not measured is not a failure")
	for _, m := range doc.Metrics {
		for _, key := range []string{"name", "value", "baseline", "ratio", "unit", "repeats", "spread", "samples"} {
			require.Contains(t, m, key, "metric %v", m["name"])
		}
	}
	first := doc.Metrics[0]
	require.Equal(t, "dispatch throughput (cb/s)", first["name"])
	require.Equal(t, 5e6, first["value"])
	require.Equal(t, 25e6, first["baseline"])
	require.InDelta(t, 0.2, first["ratio"], 1e-12)
	require.Equal(t, "cb/s", first["unit"])
	require.Equal(t, false, first["ok"])
	require.Equal(t, map[string]any{"of": "ratio", "op": ">=", "bound": 0.5}, first["target"])
	require.Equal(t, 4.8e6, first["spread"].(map[string]any)["value"].(map[string]any)["min"])

	require.NotContains(t, first, "figures", "none: omitted")
	require.Equal(t, []any{map[string]any{"name": "p50", "unit": "us", "value": 2.0, "samples": []any{3.0, 1.0, 2.0}}},
		doc.Metrics[1]["figures"], "a figure's value is its samples' median")
	require.Nil(t, doc.Metrics[2]["ratio"], "allocs: null ratio over a zero baseline")
	require.NotContains(t, doc.Metrics[3], "target", "bytes per timer has no target")
	require.NotContains(t, doc.Metrics[3], "ok")
	require.Equal(t, "no broker", doc.Metrics[4]["error"])
	require.NotContains(t, first, "unsteady", "steady: omitted")
	require.Equal(t, true, doc.Metrics[5]["unsteady"], "p50's repetitions swing 1900x")
	require.Equal(t, 2.0, doc.Machine["cpus"])
}
