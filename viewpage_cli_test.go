package robotexec_test

// End-to-end test of the live view's own page: robotexec run of the demo
// with view.listen, the page loaded in headless Chromium (Debian's
// chromium) driven by puppeteer-core under Node.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/npmci"
	"github.com/robotexec/robotexec/internal/testenv"
)

// pagecheckDir is the directory of puppeteer-core and the page's script.
const pagecheckDir = "internal/view/testdata/pagecheck"

// pageRun is what page.mjs prints.
type pageRun struct {
	Nodes, Fields []string
	Field         string
	Shots         []struct {
		File, Canvas, Last string
		Points             int
	}
	Callbacks [][]string
	Console   []string
	Error     string
}

// TestViewPage: the page at / of the live view of robotexec run of the
// demo, in headless Chromium, shows every node of the demo in its graph
// and the callbacks' figures, offers robot/imu0/data's numeric fields, and
// its plot of the first one moves between two screenshots taken 1 s
// apart. The screenshots go to $ROBOTEXEC_SCREENSHOTS when set, else to
// the test's temporary folder.
func TestViewPage(t *testing.T) {
	t.Parallel()
	chromium := chromiumPath(t)
	node := npmci.Node(t, pagecheckDir, "puppeteer-core, which drives Chromium for the page's test", "puppeteer-core")
	demo, err := config.Load("examples/config.yaml")
	require.NoError(t, err)
	var names []string
	for _, n := range demo.Nodes {
		names = append(names, n.Name)
	}
	viewPort, demoPort := freePort(t), freePort(t)
	cfg := configOnPort(t, "examples/config.yaml", demoPort)
	data, err := os.ReadFile(cfg)
	require.NoError(t, err)
	writeFile(t, cfg, string(data)+fmt.Sprintf("\nview:\n  listen: 127.0.0.1:%d\n", viewPort))
	run := startRun(t, robotexecBin, cfg)
	run.stderr.waitFor(t, startup, "serving the live view")

	outDir := os.Getenv("ROBOTEXEC_SCREENSHOTS")
	if outDir == "" {
		outDir = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(outDir, 0o755))
	plan, err := json.Marshal(map[string]any{"nodes": names, "topic": "robot/imu0/data", "outDir": outDir, "timeoutMs": 20000})
	require.NoError(t, err)
	got := runPageCheck(t, node, chromium, fmt.Sprintf("http://127.0.0.1:%d/", viewPort), string(plan))

	require.Subset(t, got.Nodes, names, "the page's graph shows every node of the demo")
	require.Equal(t, []string{"ax", "ay", "az", "gx", "gy", "gz"}, got.Fields, "robot/imu0/data's numeric fields")
	require.Equal(t, "ax", got.Field)
	require.Len(t, got.Shots, 2)
	for _, s := range got.Shots {
		st, err := os.Stat(s.File)
		require.NoError(t, err, "screenshot")
		require.Positive(t, st.Size(), s.File)
		require.Positive(t, s.Points, "points plotted at %s", s.File)
	}
	a, b := got.Shots[0], got.Shots[1]
	require.True(t, a.Canvas != b.Canvas || a.Last != b.Last, "the plot moved in 1 s: %+v", got.Shots)
	requirePageCallbacks(t, got.Callbacks)
	t.Logf("screenshots: %s, %s", a.File, b.File)

	run.signal(t, os.Interrupt)
	require.Equal(t, 0, run.wait(t, stopWithin), "%s", run)
}

// requirePageCallbacks checks the page's table of callbacks: the IMU's
// timer has run, with its dispatch latency.
func requirePageCallbacks(t *testing.T, rows [][]string) {
	t.Helper()
	for _, r := range rows {
		if len(r) == 6 && r[0] == "imu0" && r[1] == "timer(10ms)" {
			require.NotEqual(t, "0", r[2], "imu0's runs: %v", r)
			require.Regexp(t, `^[0-9.]+ (µs|ms|s)$`, r[3], "latency p50: %v", r)
			require.Regexp(t, `^[0-9.]+ (µs|ms|s)$`, r[4], "latency p99: %v", r)
			return
		}
	}
	t.Fatalf("no row of imu0's timer among the page's callbacks: %v", rows)
}

// chromiumPath returns Debian's chromium, or ends the test as
// testenv.Missing says.
func chromiumPath(t *testing.T) string {
	t.Helper()
	return testenv.LookPath(t, testenv.Chromium)
}

// runPageCheck runs page.mjs with plan against url and returns what it
// saw; the run must end without an error.
func runPageCheck(t *testing.T, node, chromium, url, plan string) pageRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(pagecheckDir, "page.mjs"), chromium, url, plan)
	cmd.WaitDelay = 5 * time.Second // Chromium's children may hold the pipes
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var got pageRun
	require.NoError(t, json.Unmarshal(out, &got), "page.mjs printed %q; stderr: %s", out, stderr.String())
	require.NoError(t, err, "page.mjs: %s; stderr: %s", out, stderr.String())
	require.Empty(t, got.Error, "the page's console: %v", got.Console)
	return got
}
