package robotexec_test

// End-to-end test of the embedded broker's limits under a connection flood
// and oversized CONNECTs, as robotexec run serves them.

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestEmbeddedBrokerLimits: with mqtt.max_connections 30, a flood of idle
// sockets gets the connections beyond 30 refused and counted; 20 clients
// whose CONNECT claims 15 MiB are closed before the broker holds more
// than 64 KiB of them, counted, and the process's memory barely moves;
// the nodes go on, and clients connect again once the flood is gone.
func TestEmbeddedBrokerLimits(t *testing.T) {
	t.Parallel()
	r := startPipeline(t, pipelineOptions{broker: "embedded", inProcess: true, mqtt: ", max_connections: 30",
		nodes: "  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 20ms } }\n"})
	addr := strings.TrimPrefix(r.url, "tcp://")
	rss := func() int {
		f, err := os.Open(fmt.Sprintf("/proc/%d/status", r.cmd.Process.Pid))
		require.NoError(t, err)
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			if v, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
				kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
				require.NoError(t, err)
				return kb << 10
			}
		}
		t.Fatal("no VmRSS")
		return 0
	}
	before := rss()

	base := r.metric(t, `robotexec_broker_connections`) // the app's own client
	var idle []net.Conn
	for range 40 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		idle = append(idle, c)
	}
	deadline := time.Now().Add(traffic)
	for r.metric(t, `robotexec_broker_refused_total{reason="max_connections"}`) < 10 {
		require.True(t, time.Now().Before(deadline), "the connections over the limit were not refused")
		time.Sleep(50 * time.Millisecond)
	}
	for _, c := range idle {
		_ = c.Close()
	}
	// The large CONNECTs below must find room: a connection the broker
	// has not yet seen closed would have them refused for the limit.
	deadline = time.Now().Add(traffic)
	for r.metric(t, `robotexec_broker_connections`) > base {
		require.True(t, time.Now().Before(deadline), "the broker did not see the idle connections close")
		time.Sleep(50 * time.Millisecond)
	}

	// CONNECT, remaining length 15 MiB, then 1 MiB of it.
	header := []byte{0x10, 0x80, 0x80, 0xc0, 0x07}
	chunk := make([]byte, 1<<20)
	for range 20 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, _ = c.Write(header)
		_ = c.SetWriteDeadline(time.Now().Add(2 * time.Second))
		_, _ = c.Write(chunk)
		_ = c.Close()
	}
	deadline = time.Now().Add(traffic)
	for r.metric(t, `robotexec_broker_refused_total{reason="connect_too_large"}`) < 20 {
		require.True(t, time.Now().Before(deadline), "the large CONNECTs were not refused")
		time.Sleep(50 * time.Millisecond)
	}
	grew := rss() - before
	t.Logf("RSS %d MiB before, grew %d KiB", before>>20, grew>>10)
	require.Less(t, grew, 32<<20, "the broker held the CONNECTs' claims")

	echo := runCmd(t, traffic, robotexecBin, nil, "echo", "-broker", r.url, "-n", "3", "robot/heartbeat")
	require.Equal(t, 0, echo.code, "%s", echo)
	r.signal(t, os.Interrupt)
	require.Equal(t, 0, r.wait(t, stopWithin))
}
