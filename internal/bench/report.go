package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// Target is what a metric must reach: its ratio or its value, compared with
// a bound.
type Target struct {
	// Of is "ratio" or "value": what the bound applies to.
	Of string `json:"of"`
	// Op is ">=", "<=" or "==".
	Op string `json:"op"`
	// Bound is the figure to reach.
	Bound float64 `json:"bound"`
}

// Holds reports whether x meets the target.
func (t Target) Holds(x float64) bool {
	switch t.Op {
	case ">=":
		return x >= t.Bound
	case "<=":
		return x <= t.Bound
	case "==":
		// Figures are printed with three decimals: what prints as the
		// bound meets it.
		return math.Abs(x-t.Bound) < 0.0005
	}
	return false
}

// String returns the target as the table prints it: "≥0.5", "≤2.0", "=0".
func (t Target) String() string {
	op := map[string]string{">=": "≥", "<=": "≤", "==": "="}[t.Op]
	b := fmt.Sprintf("%g", t.Bound)
	if t.Bound == math.Trunc(t.Bound) && t.Of == "ratio" {
		b = fmt.Sprintf("%.1f", t.Bound)
	}
	return op + b
}

// Metric is one row of the report: robotexec's figure, the baseline's, and
// their ratio, each the median of the repetitions.
type Metric struct {
	// Name starts with the metric's name in issue 6 ("dispatch
	// throughput", ...) and ends with its unit in parentheses.
	Name string `json:"name"`
	// Value is robotexec's median.
	Value float64 `json:"value"`
	// Baseline is the baseline's median, measured in the same run.
	Baseline float64 `json:"baseline"`
	// Ratio is Value / Baseline; null when Baseline is 0.
	Ratio *float64 `json:"ratio"`
	// Unit is the unit of Value and Baseline.
	Unit string `json:"unit"`
	// BaselineName says what the baseline is: "chan pool", "raw paho", ...
	BaselineName string `json:"baseline_name"`
	// Target is what the metric must reach; nil when it has none.
	Target *Target `json:"target,omitempty"`
	// OK reports whether Target holds; absent when there is no target or
	// nothing was measured.
	OK *bool `json:"ok,omitempty"`
	// Repeats is the number of repetitions measured.
	Repeats int `json:"repeats"`
	// Spread summarizes the repetitions; Spread.Ratio is over the ratios of
	// the repetitions' pairs.
	Spread Spread `json:"spread"`
	// Samples are the repetitions' figures, in order.
	Samples Samples `json:"samples"`
	// Unsteady reports that robotexec's repetitions, or the baseline's,
	// differ by more than UnsteadySwing (largest over smallest): the median
	// hides two speeds, or a disturbed run.
	Unsteady bool `json:"unsteady,omitempty"`
	// Figures are further figures of the row, measured in the same
	// repetitions: a count beside a time, or the figure of a candidate
	// baseline that was not the one chosen. The note quotes them.
	Figures []Figure `json:"figures,omitempty"`
	// Note says how the metric was measured when the name does not.
	Note string `json:"note,omitempty"`
	// Error says why the metric could not be measured; the figures are 0.
	// robotexec bench exits 1 when a metric has one.
	Error string `json:"error,omitempty"`
	// NotMeasured says what this machine lacks to measure the metric
	// ("install mosquitto"); the figures are 0. It is not a failure.
	NotMeasured string `json:"not_measured,omitempty"`
}

// UnsteadySwing is the largest factor between a row's repetitions (see
// Summary.Swing) that the table takes as steady; a row beyond it is flagged.
const UnsteadySwing = 1.5

// Spread summarizes the repetitions of a metric.
type Spread struct {
	// Value summarizes robotexec's repetitions.
	Value Summary `json:"value"`
	// Baseline summarizes the baseline's.
	Baseline Summary `json:"baseline"`
	// Ratio summarizes the ratio of each repetition's pair.
	Ratio Summary `json:"ratio"`
}

// Samples are a metric's raw figures, one per repetition.
type Samples struct {
	// Value holds robotexec's figures.
	Value []float64 `json:"value"`
	// Baseline holds the baseline's, paired with Value's by index.
	Baseline []float64 `json:"baseline"`
}

// Figure is one further figure of a metric (see Metric.Figures).
type Figure struct {
	// Name says what was measured, and for which system.
	Name string `json:"name"`
	// Unit is the unit of Value and Samples.
	Unit string `json:"unit"`
	// Value is the median of Samples.
	Value float64 `json:"value"`
	// Samples are the repetitions' figures, in order.
	Samples []float64 `json:"samples"`
}

// NewFigure returns the figure named name of the repetitions' samples.
func NewFigure(name, unit string, samples []float64) Figure {
	return Figure{Name: name, Unit: unit, Value: Median(samples), Samples: nonNil(samples)}
}

// pairRatios returns each of values over the baseline of the same index,
// for the pairs whose baseline is not 0.
func pairRatios(values, baselines []float64) []float64 {
	var pairs []float64
	for i := range min(len(values), len(baselines)) {
		if baselines[i] != 0 {
			pairs = append(pairs, values[i]/baselines[i])
		}
	}
	return pairs
}

// Spec describes a metric before it is measured.
type Spec struct {
	// Name, Unit, BaselineName and Target are copied to the Metric.
	Name, Unit, BaselineName string
	Target                   *Target
}

// NewMetric returns the metric of spec measured as values (robotexec's) and
// baselines (paired by index; they may be fewer or more). A figure that is
// not finite makes the metric an error.
func NewMetric(spec Spec, values, baselines []float64) Metric {
	m := Metric{
		Name:         spec.Name,
		Unit:         spec.Unit,
		BaselineName: spec.BaselineName,
		Target:       spec.Target,
		Repeats:      max(len(values), len(baselines)),
		Samples:      Samples{Value: nonNil(values), Baseline: nonNil(baselines)},
	}
	for _, x := range slices.Concat(values, baselines) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			m.Error = "a repetition measured nothing"
			m.Samples = Samples{Value: []float64{}, Baseline: []float64{}}
			return m
		}
	}
	if len(values) == 0 {
		m.Error = "nothing measured"
		return m
	}
	m.Spread.Value = Summarize(values)
	m.Spread.Baseline = Summarize(baselines)
	m.Value = m.Spread.Value.Median
	m.Baseline = m.Spread.Baseline.Median
	m.Unsteady = m.Spread.Value.Swing() > UnsteadySwing || m.Spread.Baseline.Swing() > UnsteadySwing
	if len(baselines) > 0 && m.Baseline != 0 {
		r := m.Value / m.Baseline
		m.Ratio = &r
		m.Spread.Ratio = Summarize(pairRatios(values, baselines))
	}
	if t := m.Target; t != nil {
		var ok bool
		switch {
		case t.Of == "value":
			ok = t.Holds(m.Value)
		case m.Ratio != nil:
			ok = t.Holds(*m.Ratio)
		default:
			return m
		}
		m.OK = &ok
	}
	return m
}

// Failed returns the metric of spec that could not be measured, for err.
func Failed(spec Spec, err error) Metric {
	m := NewMetric(spec, nil, nil)
	m.Error = err.Error()
	return m
}

// NotMeasured returns the metric of spec that this machine cannot measure
// for want of what (see Metric.NotMeasured).
func NotMeasured(spec Spec, what string) Metric {
	m := NewMetric(spec, nil, nil)
	m.Error = ""
	m.NotMeasured = what
	return m
}

func nonNil(xs []float64) []float64 {
	if xs == nil {
		return []float64{}
	}
	return xs
}

// Machine describes where the suite ran.
type Machine struct {
	// CPUs is runtime.NumCPU().
	CPUs int `json:"cpus"`
	// GOMAXPROCS is runtime.GOMAXPROCS(0).
	GOMAXPROCS int `json:"gomaxprocs"`
	// Go is runtime.Version().
	Go string `json:"go"`
	// OS and Arch are runtime.GOOS and runtime.GOARCH.
	OS   string `json:"os"`
	Arch string `json:"arch"`
	// LoadBefore and LoadAfter are the system's load averages (1, 5 and
	// 15 minutes, from /proc/loadavg) when the run started and ended,
	// empty where unknown: a load near the number of CPUs means other
	// processes competed for them.
	LoadBefore string `json:"load_before,omitempty"`
	LoadAfter  string `json:"load_after,omitempty"`
}

// Report is the result of a run of the suite.
type Report struct {
	// Metrics are the rows, in the order of the table.
	Metrics []Metric `json:"metrics"`
	// Machine is where they were measured.
	Machine Machine `json:"machine"`
	// Workers is the executor's number of workers, and the baselines'.
	Workers int `json:"workers"`
	// Repeat is the number of repetitions asked for.
	Repeat int `json:"repeat"`
	// Budget is the time budget asked for, and Elapsed the time taken.
	Budget  string `json:"budget"`
	Elapsed string `json:"elapsed"`
}

// WriteJSON writes r as one JSON object, indented, followed by a newline.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes r as the table `robotexec bench` prints
// (docs/performance.md): metric, robotexec, baseline and ratio columns, then
// the target and whether it holds; then one line on the machine and the
// method, and the metrics' notes.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\trobotexec\tbaseline\tratio\ttarget")
	for _, m := range r.Metrics {
		if m.Error != "" {
			fmt.Fprintf(tw, "%s\terror: %s\t\t\t%s\n", m.Name, m.Error, targetCell(m))
			continue
		}
		if m.NotMeasured != "" {
			fmt.Fprintf(tw, "%s\tnot measured: %s\t\t\t%s\n", m.Name, m.NotMeasured, targetCell(m))
			continue
		}
		base := withSpread(m.Baseline, m.Spread.Baseline) + swingMark(m.Spread.Baseline)
		if len(m.Samples.Baseline) == 0 {
			base = "-"
		}
		if m.BaselineName != "" {
			base += " (" + m.BaselineName + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Name, withSpread(m.Value, m.Spread.Value)+swingMark(m.Spread.Value),
			base, ratioCell(m), targetCell(m))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	mc := r.Machine
	fmt.Fprintf(w, "\n%d CPUs (GOMAXPROCS %d), %s %s/%s; %d workers; median of %d repetitions ±half their range [or the range]; ratio = robotexec / baseline (min–max over the repetitions' pairs); budget %s, took %s.\n",
		mc.CPUs, mc.GOMAXPROCS, mc.Go, mc.OS, mc.Arch, r.Workers, r.Repeat, r.Budget, r.Elapsed)
	if mc.LoadBefore != "" || mc.LoadAfter != "" {
		fmt.Fprintf(w, "load average (1, 5, 15 min): %s at the start, %s at the end.\n", mc.LoadBefore, mc.LoadAfter)
	}
	r.writeUnsteady(w)
	for _, m := range r.Metrics {
		if m.Note != "" {
			fmt.Fprintf(w, "%s: %s\n", shortName(m.Name), m.Note)
		}
	}
	return nil
}

// writeUnsteady writes one line naming the unsteady rows, if any.
func (r *Report) writeUnsteady(w io.Writer) {
	var names []string
	for _, m := range r.Metrics {
		if m.Unsteady && m.Error == "" {
			names = append(names, shortName(m.Name))
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(w, "UNSTEADY (repetitions differ by more than %gx, marked ×N!): %s; their medians are not one speed.\n",
			UnsteadySwing, strings.Join(names, ", "))
	}
}

// swingMark marks repetitions that differ by more than UnsteadySwing with
// their factor: " ×2.3!".
func swingMark(s Summary) string {
	if sw := s.Swing(); sw > UnsteadySwing {
		return " ×" + FormatNumber(sw) + "!"
	}
	return ""
}

// shortName drops the unit in parentheses from a metric's name.
func shortName(name string) string {
	if i := strings.LastIndex(name, " ("); i > 0 {
		return name[:i]
	}
	return name
}

// withSpread formats x and the spread of its repetitions: ±half their
// range in percent of x, or their range when that is wider than ±50%.
func withSpread(x float64, s Summary) string {
	hr := s.HalfRange()
	switch {
	case math.Round(hr*100) == 0 || math.Abs(x) < 0.001:
		// A spread that rounds to 0%, or of figures that print as 0
		// (allocations), says nothing.
		return FormatNumber(x)
	case hr > 0.5:
		return fmt.Sprintf("%s [%s–%s]", FormatNumber(x), FormatNumber(s.Min), FormatNumber(s.Max))
	}
	return fmt.Sprintf("%s ±%.0f%%", FormatNumber(x), math.Round(hr*100))
}

func ratioCell(m Metric) string {
	if m.Ratio == nil {
		return "-"
	}
	s := FormatNumber(*m.Ratio)
	if sp := m.Spread.Ratio; sp.N > 1 {
		s += fmt.Sprintf(" (%s–%s)", FormatNumber(sp.Min), FormatNumber(sp.Max))
	}
	return s
}

func targetCell(m Metric) string {
	if m.Target == nil {
		return "-"
	}
	s := m.Target.String()
	if m.Target.Of == "value" {
		s = "value " + s
	}
	switch {
	case m.OK == nil:
		return s + " ?"
	case *m.OK:
		return s + " ok"
	}
	return s + " MISSED"
}

// FormatNumber formats x with three significant digits, and a k, M or G
// suffix from ten thousand up: 0.523, 12.5, 812, 48.2k, 4.91M.
func FormatNumber(x float64) string {
	a := math.Abs(x)
	switch {
	case x == 0:
		return "0"
	case a >= 1e9:
		return sig3(x/1e9) + "G"
	case a >= 1e6:
		return sig3(x/1e6) + "M"
	case a >= 1e4:
		return sig3(x/1e3) + "k"
	}
	return sig3(x)
}

// sig3 formats x, below 10,000 in magnitude, with three significant digits
// (no exponent; integers from 1,000 up keep their four).
func sig3(x float64) string {
	a := math.Abs(x)
	// Round first, so that 9.996 prints as 10.0, not 10.00.
	for _, p := range []struct {
		from float64
		prec int
	}{{999.5, 0}, {99.95, 0}, {9.995, 1}, {0.9995, 2}} {
		if a >= p.from {
			return fmt.Sprintf("%.*f", p.prec, x)
		}
	}
	return fmt.Sprintf("%.3f", x)
}
