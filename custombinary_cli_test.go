package robotexec_test

// End-to-end tests of a custom binary, as docs/nodes.md (A node type,
// Custom binaries) shows it.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// specNode is the node example of docs/nodes.md (A node type) and the
// README's "Your first node", verbatim.
const specNode = `package imufilter

import (
	"context"
	"time"

	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/timers"
)

func init() { nodes.Register("imu_filter", "low-pass filter for IMU samples", New) }

type Params struct {
	Input  string        ` + "`yaml:\"input\"`" + `
	Output string        ` + "`yaml:\"output\"`" + `
	Alpha  float64       ` + "`yaml:\"alpha\"`" + `
	Period time.Duration ` + "`yaml:\"period\"`" + `
}

type Sample struct{ AX, AY, AZ float64 }

func New(n *nodes.Node) error {
	p := Params{Alpha: 0.2, Period: 50 * time.Millisecond}
	if err := n.Params(&p); err != nil { // strict decode, defaults kept
		return err
	}
	out := n.Publisher(p.Output)
	var avg Sample
	nodes.Subscribe(n, p.Input, func(ctx context.Context, s Sample) { avg = blend(avg, s, p.Alpha) })
	n.Timer(p.Period, func(ctx context.Context, ev timers.Event) { out.PublishJSON(ctx, avg) })
	return nil // callbacks of one node share its default mutually exclusive group
}
`

// specBlend is the blend that the node example leaves to the user.
const specBlend = `package imufilter

// blend returns the exponential moving average of avg and s with weight a.
func blend(avg, s Sample, a float64) Sample {
	mix := func(x, y float64) float64 { return x + a*(y-x) }
	return Sample{AX: mix(avg.AX, s.AX), AY: mix(avg.AY, s.AY), AZ: mix(avg.AZ, s.AZ)}
}
`

// slowStop holds test nodes in the same package: slow_stop, whose
// shutdown function blocks, so that a drain is slow on purpose and a
// second signal must cut it short; and slow_sink, a subscriber that
// takes work per message and publishes nothing.
const slowStop = `package imufilter

import (
	"context"
	"time"

	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
)

func init() { nodes.Register("slow_sink", "test node that takes work per message of input", newSlowSink) }

type slowSinkParams struct {
	Input string        ` + "`yaml:\"input\"`" + `
	Work  time.Duration ` + "`yaml:\"work\"`" + `
}

func newSlowSink(n *nodes.Node) error {
	var p slowSinkParams
	if err := n.Params(&p); err != nil {
		return err
	}
	n.Subscribe(p.Input, func(ctx context.Context, m subscribers.Message) { time.Sleep(p.Work) })
	return nil
}

func init() { nodes.Register("slow_stop", "test node whose shutdown takes a minute", newSlowStop) }

func newSlowStop(n *nodes.Node) error {
	n.OnShutdown(func() {
		n.Logger().Info("slow_stop: shutting down slowly")
		time.Sleep(time.Minute)
	})
	return nil
}
`

// specMain is the custom binary of docs/nodes.md (Custom binaries),
// verbatim.
const specMain = `package main

import (
	"github.com/robotexec/robotexec"
	_ "example.com/mynodes/imufilter"
)

func main() { robotexec.Main() }
`

const customConfig = `mqtt:
  listen: 127.0.0.1:1883
nodes:
  - name: filter
    type: imu_filter
    params: { input: imu/raw, output: imu/filtered, alpha: 0.5, period: 50ms }
`

const slowStopConfig = `mqtt:
  listen: 127.0.0.1:1883
nodes:
  - name: filter
    type: imu_filter
    params: { input: imu/raw, output: imu/filtered }
  - name: slow
    type: slow_stop
`

func TestCustomBinary(t *testing.T) {
	t.Parallel()
	bin := buildCustomBinary(t)

	t.Run("nodes", func(t *testing.T) {
		r := runCmd(t, quickExit, bin, nil, "nodes")
		require.Equal(t, 0, r.code, "%s", r)
		require.Regexp(t, `(?m)^imu_filter\s+low-pass filter for IMU samples$`, r.stdout)
		for _, typ := range []string{"bridge", "heartbeat", "watchdog", "slow_stop", "slow_sink"} {
			require.Regexp(t, `(?m)^`+typ+`\s+\S`, r.stdout)
		}
		require.NotContains(t, r.stdout, "sim_imu", "only the built-in types and the binary's own")
	})

	t.Run("validate", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "config.yaml")
		writeFile(t, path, "nodes:\n  - name: filter\n    type: imu_filter\n    params:\n      input: imu/raw\n      colour: red\n")
		r := runCmd(t, quickExit, bin, nil, "validate", path)
		require.Equal(t, 2, r.code, "%s", r)
		require.Equal(t, path+":6: nodes[0].params.colour: unknown key (known keys: input, output, alpha, period)\n", r.stderr,
			"n.Params decodes strictly")
	})

	t.Run("filter", func(t *testing.T) {
		t.Parallel()
		port := freePort(t)
		url := brokerURL(port)
		path := filepath.Join(t.TempDir(), "config.yaml")
		writeFile(t, path, strings.Replace(customConfig, "127.0.0.1:1883", fmt.Sprintf("127.0.0.1:%d", port), 1))
		rx := startRun(t, bin, path)

		echo := startProc(t, robotexecBin, nil, "echo", "-broker", url, "-timeout", "5s", "imu/filtered")
		blended := func(l string) bool { return strings.HasPrefix(l, "imu/filtered ") && !strings.Contains(l, `"AX":0,`) }
		publishUntil(t, url, func() bool { _, ok := echo.stdout.find(blended); return ok },
			pubMsg{"imu/raw", `{"AX":1,"AY":2,"AZ":3}`})
		line, _ := echo.stdout.find(blended)
		var s struct{ AX, AY, AZ float64 }
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "imu/filtered ")), &s), "line %s", line)
		// The average moves from zero towards (1, 2, 3) along the line
		// through both, by alpha per sample.
		require.Greater(t, s.AX, 0.0, line)
		require.LessOrEqual(t, s.AX, 1.0, line)
		require.InDelta(t, 2*s.AX, s.AY, 1e-9, line)
		require.InDelta(t, 3*s.AX, s.AZ, 1e-9, line)

		echo.signal(t, os.Interrupt)
		require.Equal(t, 0, echo.wait(t, stopWithin))
		rx.signal(t, os.Interrupt)
		require.Equal(t, 0, rx.wait(t, stopWithin))
		requireOrdered(t, rx.stderr.all(), "robotexec running", "draining", "stopped")
	})

	for _, name := range brokerNames {
		t.Run("burst for a slow sink via "+name, func(t *testing.T) {
			t.Parallel()
			burstWaitsAtBroker(t, bin, name)
		})
	}

	t.Run("second signal during a slow drain", func(t *testing.T) {
		t.Parallel()
		port := freePort(t)
		path := filepath.Join(t.TempDir(), "config.yaml")
		writeFile(t, path, strings.Replace(slowStopConfig, "127.0.0.1:1883", fmt.Sprintf("127.0.0.1:%d", port), 1))
		rx := startRun(t, bin, path)
		rx.signal(t, os.Interrupt)
		rx.stderr.waitFor(t, stopWithin, "slow_stop: shutting down slowly")
		rx.signal(t, os.Interrupt)
		require.Equal(t, 1, rx.wait(t, 3*time.Second), "a second signal exits at once")
		line := rx.stderr.waitFor(t, time.Second, "second signal")
		require.Contains(t, line, "exiting now")
		require.NotContains(t, strings.Join(rx.stderr.all(), "\n"), "msg=stopped")
	})
}

// buildCustomBinary builds that custom binary in a temporary module
// whose go.mod replaces github.com/robotexec/robotexec with this checkout.
func buildCustomBinary(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(goMod)
	require.NotNil(t, goLine, "the go directive of the checkout's go.mod")

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), fmt.Sprintf(
		"module example.com/mynodes\n\n%s\n\nrequire github.com/robotexec/robotexec v0.0.0-00010101000000-000000000000\n\nreplace github.com/robotexec/robotexec => %s\n",
		goLine, strconv.Quote(root)))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	writeFile(t, filepath.Join(dir, "go.sum"), string(sum))
	writeFile(t, filepath.Join(dir, "main.go"), specMain)
	writeFile(t, filepath.Join(dir, "imufilter", "imufilter.go"), specNode)
	writeFile(t, filepath.Join(dir, "imufilter", "blend.go"), specBlend)
	writeFile(t, filepath.Join(dir, "imufilter", "slowstop.go"), slowStop)
	writeFile(t, filepath.Join(dir, "imufilter", "reserve.go"), reserveNodes)

	bin := filepath.Join(dir, "mybin")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool(), "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build of the custom binary (%v):\n%s", ctx.Err(), out)
	return bin
}

// repoRoot returns the directory of the checkout's go.mod, found from the
// test's working directory upwards.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module github.com/robotexec/robotexec\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod of github.com/robotexec/robotexec above the working directory")
		dir = parent
	}
}
