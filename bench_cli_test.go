package robotexec_test

// The CI smoke test of robotexec bench: the built binary (see
// cli_harness_test.go's TestMain) runs the whole suite with a tiny budget
// and must exit 0 with valid JSON naming every metric. Speed is never
// asserted.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtttest"
)

// benchRun runs robotexecBin bench with args and returns its exit code,
// stdout and stderr.
func benchRun(t *testing.T, timeout time.Duration, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, robotexecBin, append([]string{"bench"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "robotexec bench %s did not end within %v\nstderr:\n%s", strings.Join(args, " "), timeout, stderr.String())
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return code, stdout.String(), stderr.String()
}

// benchMetrics are the metric names issue 6 fixes (each name starts with
// one) and the rows the suite adds.
var benchMetrics = []string{
	"dispatch throughput", "dispatch throughput via bus", "dispatch latency p50", "dispatch latency p99", "dispatch latency p99.9",
	"per-event cost 100k vs 10", "timer lateness p99", "timer lateness p99, go timers", "mqtt bridge", "mqtt bridge via mosquitto",
	"mqtt bridge under run via mosquitto", "mqtt bridge under run via mosquitto, paced p99", "mqtt bridge under run via mosquitto, rss",
	"timer lateness p99 under run", "timer deadlines missed under run",
	"idle cpu", "pipeline 5 hops p50", "pipeline 5 hops p99", "pipeline 5 hops p50 vs broker hop", "pipeline 5 hops via mosquitto",
	"view forwarding", "view forwarding p99", "mqtt bridge via a 2-node cluster", "mqtt failover to the other node",
	"reference hot path mean (ms)", "reference hot path p99 (ms)", "reference hot path drops", "reference planner period std (ms)",
	"reference hot path mean, 1 worker", "reference hot path drops, 1 worker", "reference hot path via mosquitto (ms)",
	"reference saturated hot path mean (ms)", "reference saturated hot path drops", "reference saturated hot path mean, no priorities (ms)",
	"reference saturated hot path drops, no priorities", "reference saturated hot path mean, realtime", "reference cpu",
	"allocs per event", "bytes per idle subscription", "bytes per timer",
}

// TestBenchSmokeJSON and TestBenchTable are not parallel: they load every
// CPU, which would slow the timed CLI tests down.
func TestBenchSmokeJSON(t *testing.T) {
	code, stdout, stderr := benchRun(t, 3*time.Minute, "-json", "-budget", "3s", "-repeat", "1", "-q")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Empty(t, stderr, "-q prints no progress")
	require.True(t, json.Valid([]byte(stdout)), "stdout is not JSON:\n%s", stdout)

	var doc struct {
		Metrics []struct {
			Name     *string  `json:"name"`
			Value    *float64 `json:"value"`
			Baseline *float64 `json:"baseline"`
			Ratio    any      `json:"ratio"`
			Unit     *string  `json:"unit"`
			Error    string   `json:"error"`
			NotMeas  string   `json:"not_measured"`
		} `json:"metrics"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	var raw struct {
		Metrics []map[string]json.RawMessage `json:"metrics"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &raw))
	var names []string
	notMeasured, noCluster := false, false
	for i, m := range doc.Metrics {
		require.NotNil(t, m.Name)
		names = append(names, *m.Name)
		require.NotNil(t, m.Value, "%s: value", *m.Name)
		require.NotNil(t, m.Baseline, "%s: baseline", *m.Name)
		require.Contains(t, raw.Metrics[i], "ratio", "%s: ratio (a number, or null without a baseline)", *m.Name)
		require.NotNil(t, m.Unit, "%s: unit", *m.Name)
		require.Empty(t, m.Error, "%s", *m.Name)
		if _, ok := mqtttest.EjabberdPath(); !ok && (strings.Contains(*m.Name, "cluster") || strings.Contains(*m.Name, "failover")) {
			// Without ejabberd the cluster's rows say so, and bench exits 0.
			require.Equal(t, "install ejabberd", m.NotMeas, "%s", *m.Name)
			noCluster = true
			continue
		}
		if _, ok := mqtttest.MosquittoPath(); !ok && strings.Contains(*m.Name, "mosquitto") {
			// Without mosquitto the row says so, and bench exits 0.
			require.Equal(t, "install mosquitto", m.NotMeas, "%s", *m.Name)
			notMeasured = true
			continue
		}
		require.Empty(t, m.NotMeas, "%s", *m.Name)
		if strings.HasPrefix(*m.Name, "reference hot path mean") || strings.HasPrefix(*m.Name, "reference hot path p99") ||
			strings.HasPrefix(*m.Name, "reference saturated hot path mean") {
			// -json's ratios of the reference rows are against the lower bound.
			require.JSONEq(t, `"lower bound"`, string(raw.Metrics[i]["baseline_name"]), "%s", *m.Name)
			require.Positive(t, *m.Baseline, "%s: the lower bound", *m.Name)
			require.NotEqual(t, "null", string(raw.Metrics[i]["ratio"]), "%s", *m.Name)
		}
	}
	require.Len(t, names, len(benchMetrics), "%v", names)
	for i, want := range benchMetrics {
		require.True(t, strings.HasPrefix(names[i], want), "metric %d is %q, want it to start with %q", i, names[i], want)
	}
	if noCluster {
		mqtttest.MissingEjabberd(t) // the cluster's rows were not measured
	}
	if notMeasured {
		mqtttest.MissingMosquitto(t) // the rows through mosquitto were not measured
	}
}

func TestBenchTable(t *testing.T) {
	code, stdout, stderr := benchRun(t, time.Minute, "-only", "throughput,memory", "-budget", "1s", "-repeat", "2", "-workers", "1")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Regexp(t, `^metric +robotexec +baseline +ratio +target\n`, stdout)
	require.Regexp(t, `(?m)^dispatch throughput \(cb/s\) +\S+.*\(chan pool\) +\S+.* ≥0\.5 (ok|MISSED)$`, stdout)
	require.Regexp(t, `(?m)^allocs per event \(in-process\) +.* value ≤1 (ok|MISSED)$`, stdout)
	require.Contains(t, stdout, "; 1 workers; median of 2 repetitions")
	require.NotContains(t, stdout, "mqtt bridge", "-only runs only the groups named")
	require.Contains(t, stderr, "bench: throughput: 2 repetitions", "progress goes to stderr")
}

func TestBenchUsage(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := benchRun(t, quickExit, "-h")
	require.Equal(t, 0, code)
	require.Empty(t, stderr)
	for _, flag := range []string{"Usage: robotexec bench [flags]", "-budget", "-repeat", "-workers", "-json", "-only", "-cpuprofile"} {
		require.Contains(t, stdout, flag)
	}
	for _, args := range [][]string{
		{"extra"}, {"-repeat", "0"}, {"-workers", "0"}, {"-budget", "0s"}, {"-budget", "soon"}, {"-only", "nope"},
	} {
		code, stdout, stderr := benchRun(t, quickExit, args...)
		require.Equal(t, 2, code, "robotexec bench %s", strings.Join(args, " "))
		require.Empty(t, stdout, "robotexec bench %s", strings.Join(args, " "))
		require.Contains(t, stderr, "Usage: robotexec bench", "robotexec bench %s", strings.Join(args, " "))
	}
}
