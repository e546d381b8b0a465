package robotexec_test

// Observability through the real binary: metrics.listen served by
// robotexec run, and run -trace FILE written on SIGINT. The helpers are
// cli_harness_test.go's and cli_helpers_test.go's.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/tracecheck"
)

// withMetrics copies a config like configOnPort and adds metrics.listen on
// a second free port, which it returns.
func withMetrics(t *testing.T, src string, brokerPort int) (path string, metricsPort int) {
	t.Helper()
	metricsPort = freePort(t)
	return withMetricsOn(t, src, brokerPort, metricsPort), metricsPort
}

// withMetricsOn is withMetrics on a given metrics port.
func withMetricsOn(t *testing.T, src string, brokerPort, metricsPort int) string {
	t.Helper()
	path := configOnPort(t, src, brokerPort)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = fmt.Fprintf(f, "\nmetrics:\n  listen: 127.0.0.1:%d\n", metricsPort)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return path
}

func getURL(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestRunServesMetrics(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	path, mport := withMetrics(t, "testdata/valid.yaml", port)
	rx := startRun(t, robotexecBin, path)
	base := fmt.Sprintf("http://127.0.0.1:%d", mport)
	line := rx.stderr.waitFor(t, startup, "serving metrics")
	require.Contains(t, line, fmt.Sprintf("addr=127.0.0.1:%d", mport))

	// The heartbeat's timer runs every 100 ms: wait for two runs. A run's
	// timing is recorded when its callback returns, after its publication
	// may have reached echo; the next run starts after that.
	r := runCmd(t, traffic, robotexecBin, nil, "echo", "-broker", brokerURL(port), "-timeout", "5s", "-n", "2", "robot/heartbeat")
	require.Equal(t, 0, r.code, "%s", r)

	code, body := getURL(t, base+"/metrics")
	require.Equal(t, http.StatusOK, code)
	m := regexp.MustCompile(`(?m)^robotexec_callback_duration_seconds_count\{callback="beat",node="heartbeat"\} (\d+)$`).FindStringSubmatch(body)
	require.NotNil(t, m, "the heartbeat's histogram:\n%s", body)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.Positive(t, n)
	for _, name := range []string{
		"robotexec_dispatch_latency_seconds_bucket", "robotexec_queue_depth", "robotexec_messages_dropped_total",
		"robotexec_timer_missed_ticks_total", "robotexec_callback_panics_total", "robotexec_mqtt_connected 1",
		"robotexec_mqtt_reconnects_total 0", "go_goroutines",
	} {
		require.Contains(t, body, name)
	}

	code, body = getURL(t, base+"/healthz")
	require.Equal(t, http.StatusOK, code)
	var h map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &h))
	require.Equal(t, map[string]string{"executor": "running", "mqtt": "connected"}, h)

	code, _ = getURL(t, base+"/debug/pprof/")
	require.Equal(t, http.StatusOK, code)

	rx.signal(t, os.Interrupt)
	require.Equal(t, 0, rx.wait(t, stopWithin))
	for _, l := range rx.stderr.all() {
		require.NotContains(t, l, "not served yet")
	}
	requirePortFree(t, port)
	requirePortFree(t, mport)
}

func TestRunTraceFile(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	trace := filepath.Join(t.TempDir(), "trace.json")
	rx := startRun(t, robotexecBin, configOnPort(t, "testdata/valid.yaml", port), "-trace", trace)
	r := runCmd(t, traffic, robotexecBin, nil, "echo", "-broker", brokerURL(port), "-timeout", "5s", "-n", "3", "robot/heartbeat")
	require.Equal(t, 0, r.code, "%s", r)
	rx.signal(t, os.Interrupt)
	require.Equal(t, 0, rx.wait(t, stopWithin))
	line := rx.stderr.waitFor(t, time.Second, "trace written")
	requireOrdered(t, rx.stderr.all(), "draining", "trace written", "stopped")
	m := regexp.MustCompile(` runs=(\d+) overwritten=0 `).FindStringSubmatch(line)
	require.NotNil(t, m, line)
	logged, err := strconv.Atoi(m[1])
	require.NoError(t, err)

	f, err := os.Open(trace)
	require.NoError(t, err)
	defer f.Close()
	s, err := tracecheck.ChromeTrace(f)
	require.NoError(t, err)
	require.Equal(t, logged, s.Runs, "the log's count of runs")
	require.GreaterOrEqual(t, s.Runs, 3, "three heartbeats at least")
	require.Equal(t, map[int]string{1: "worker 0", 2: "worker 1"}, s.Threads, "valid.yaml has two workers")
	require.Equal(t, "robotexec", s.Process)
}

func TestRunTraceErrors(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	path := configOnPort(t, "testdata/valid.yaml", port)
	r := runCmd(t, quickExit, robotexecBin, nil, "run", "-trace", filepath.Join(t.TempDir(), "no", "such", "dir.json"), path)
	require.Equal(t, 1, r.code, "%s", r)
	require.Contains(t, r.stderr, "robotexec run: -trace: ")
	require.NotContains(t, r.stderr, "robotexec running")

	tf := filepath.Join(t.TempDir(), "t.json")
	r = runCmd(t, quickExit, robotexecBin, nil, "run", "-trace", tf, "-trace-runs", "0", path)
	require.Equal(t, 2, r.code, "%s", r)
	require.Equal(t, "robotexec run: -trace-runs 0: want a positive number\n", r.stderr)

	// A run that fails to start leaves no empty trace behind.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	busy := configOnPort(t, "testdata/valid.yaml", l.Addr().(*net.TCPAddr).Port)
	r = runCmd(t, quickExit, robotexecBin, nil, "run", "-trace", tf, busy)
	require.Equal(t, 1, r.code, "%s", r)
	require.NoFileExists(t, tf)

	r = runCmd(t, quickExit, robotexecBin, nil, "run", "-h")
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stdout, "-trace FILE")
	require.Contains(t, r.stdout, "-trace-runs")
	requirePortFree(t, port)
}

// TestRunMetricsPortInUse: a metrics address that cannot be bound is a
// runtime failure, before anything starts.
func TestRunMetricsPortInUse(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	path, mport := withMetrics(t, "testdata/valid.yaml", port)
	busy := startRun(t, robotexecBin, path)
	r := runCmd(t, quickExit, robotexecBin, nil, "run", withMetricsOn(t, "testdata/valid.yaml", freePort(t), mport))
	require.Equal(t, 1, r.code, "%s", r)
	require.Contains(t, r.stderr, fmt.Sprintf("metrics.listen: metrics: listen on 127.0.0.1:%d", mport))
	require.NotContains(t, r.stderr, "robotexec running")
	busy.signal(t, os.Interrupt)
	require.Equal(t, 0, busy.wait(t, stopWithin))
}
