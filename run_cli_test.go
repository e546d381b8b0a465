package robotexec_test

// End-to-end tests of run with a good config.

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRun runs testdata/valid.yaml (a heartbeat and a bridge) and talks to
// it with pub and echo, then stops it with SIGINT.
func TestRun(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	url := brokerURL(port)
	rx := startRun(t, robotexecBin, configOnPort(t, "testdata/valid.yaml", port))

	t.Run("echo heartbeat", func(t *testing.T) {
		r := runCmd(t, traffic, robotexecBin, nil, "echo", "-broker", url, "-timeout", "5s", "-n", "3", "robot/heartbeat")
		require.Equal(t, 0, r.code, "%s", r)
		ls := lines(r.stdout)
		require.Len(t, ls, 3, "echo -n 3 prints 3 lines:\n%s", r.stdout)
		var prev uint64
		for i, l := range ls {
			beat := parseBeat(t, l)
			require.Equal(t, "heartbeat", beat.Node, "the node's name")
			if i > 0 {
				require.Equal(t, prev+1, beat.Seq, "consecutive seq:\n%s", r.stdout)
			}
			prev = beat.Seq
		}
	})

	t.Run("pub retained then echo", func(t *testing.T) {
		r := runCmd(t, traffic, robotexecBin, nil, "pub", "-broker", url, "-timeout", "5s", "-qos", "1", "-retain", "robot/config", `{"v":1}`)
		require.Equal(t, 0, r.code, "%s", r)
		require.Empty(t, r.stdout)
		r = runCmd(t, traffic, robotexecBin, nil, "echo", "-broker", url, "-timeout", "5s", "-n", "1", "robot/config")
		require.Equal(t, 0, r.code, "%s", r)
		require.Equal(t, "robot/config {\"v\":1}\n", r.stdout)
	})

	t.Run("bridge", func(t *testing.T) {
		// echo subscribes at some point after it starts, so publish until it
		// has seen a message. The bridge has json: true: the invalid
		// payload, published first on the same topic, must never come out.
		echo := startProc(t, robotexecBin, nil, "echo", "-broker", url, "-timeout", "5s", "-n", "1", "robot/+/data")
		publishUntil(t, url, func() bool { return echo.hasExited() },
			pubMsg{"sensors/x7/raw", "not json"}, pubMsg{"sensors/x7/raw", `{"a":1}`})
		require.Equal(t, 0, echo.wait(t, quickExit))
		require.Equal(t, []string{`robot/x7/data {"a":1}`}, echo.stdout.all())
	})

	t.Run("echo stops on SIGINT", func(t *testing.T) {
		echo := startProc(t, robotexecBin, nil, "echo", "-broker", url, "-timeout", "5s", "robot/heartbeat")
		echo.stdout.waitFor(t, traffic, "robot/heartbeat ")
		echo.signal(t, os.Interrupt)
		require.Equal(t, 0, echo.wait(t, stopWithin), "echo exits 0 on SIGINT")
	})

	t.Run("SIGINT", func(t *testing.T) {
		rx.signal(t, os.Interrupt)
		require.Equal(t, 0, rx.wait(t, stopWithin), "clean stop")
		drain := rx.stderr.waitFor(t, time.Second, "draining")
		require.Contains(t, drain, "signal=interrupt")
		requireOrdered(t, rx.stderr.all(), "robotexec running", "draining", "stopped")
		require.Empty(t, rx.stdout.all(), "logs go to stderr")
		requirePortFree(t, port)
	})
}

func TestRunSIGTERM(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	rx := startRun(t, robotexecBin, configOnPort(t, "testdata/valid.yaml", port))
	rx.signal(t, syscall.SIGTERM)
	require.Equal(t, 0, rx.wait(t, stopWithin), "clean stop")
	drain := rx.stderr.waitFor(t, time.Second, "draining")
	require.Contains(t, drain, "signal=terminated")
	requireOrdered(t, rx.stderr.all(), "robotexec running", "draining", "stopped")
	requirePortFree(t, port)
}

// TestRunTwoSignals sends two signals back to back. With the built-in nodes
// the drain takes about a millisecond, so whether the second signal lands
// during the drain (exit 1, "second signal") or after it (exit 0, or
// killed by the SIGTERM once the process stopped catching signals on its
// way out) is a race; either way the process must end promptly. TestCustomBinary checks
// the second signal during a drain made slow on purpose.
func TestRunTwoSignals(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	rx := startRun(t, robotexecBin, configOnPort(t, "testdata/valid.yaml", port))
	rx.signal(t, os.Interrupt)
	rx.signal(t, syscall.SIGTERM)
	switch code := rx.wait(t, stopWithin); code {
	case 0:
		requireOrdered(t, rx.stderr.all(), "draining", "stopped")
	case 1:
		rx.stderr.waitFor(t, time.Second, "second signal")
	case -1:
		// The second signal came after the drain, as the process was
		// exiting and no longer caught signals: SIGTERM ended it.
		requireOrdered(t, rx.stderr.all(), "draining", "stopped")
		ws, ok := rx.cmd.ProcessState.Sys().(syscall.WaitStatus)
		require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM, "%s", rx)
	default:
		t.Fatalf("exit code %d, want 0 or 1\n%s", code, rx)
	}
}

func TestRunJSONLogs(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	rx := startRun(t, robotexecBin, configOnPort(t, "testdata/valid.yaml", port), "-log-format", "json", "-log-level", "debug")
	rx.signal(t, os.Interrupt)
	require.Equal(t, 0, rx.wait(t, stopWithin))
	all := rx.stderr.all()
	require.NotEmpty(t, all)
	msgs := map[string]bool{}
	for _, l := range all {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &rec), "a JSON log line: %s", l)
		for _, k := range []string{"time", "level", "msg"} {
			require.Contains(t, rec, k, "log line %s", l)
		}
		msgs[rec["msg"].(string)] = true
	}
	require.True(t, msgs["robotexec running"], "logs: %q", all)
	require.True(t, msgs["stopped"], "logs: %q", all)
}

// TestRunPortInUse runs a config whose embedded broker cannot listen: a
// runtime failure, exit 1, naming the address.
func TestRunPortInUse(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	r := runCmd(t, quickExit, robotexecBin, nil, "run", configOnPort(t, "testdata/valid.yaml", port))
	require.Equal(t, 1, r.code, "%s", r)
	require.Contains(t, r.stderr, fmt.Sprintf("127.0.0.1:%d", port))
	require.Contains(t, r.stderr, "address already in use")
	require.NotContains(t, r.stderr, "robotexec running")
}

// TestRunUnreachableBroker runs a config whose external broker does not
// answer: robotexec keeps retrying, and a signal still stops it cleanly.
func TestRunUnreachableBroker(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	rx := startRun(t, robotexecBin, configOnPort(t, "testdata/external_broker.yaml", port))
	rx.signal(t, os.Interrupt)
	require.Equal(t, 0, rx.wait(t, stopWithin), "clean stop without a broker")
	requireOrdered(t, rx.stderr.all(), "robotexec running", "draining", "stopped")
}
