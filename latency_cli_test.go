package robotexec_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// inProcessConfig is a heartbeat whose beats only a bridge node of the same
// process takes: no client of the broker subscribes to them, so they stay
// in the process, stamped by the router (see internal/bus's stamp).
const inProcessConfig = `executor:
  workers: 2
mqtt:
  broker: embedded
  listen: 127.0.0.1:%d
nodes:
  - name: heartbeat
    type: heartbeat
    params: { topic: robot/heartbeat, period: 20ms }
  - name: relay
    type: bridge
    params: { from: robot/heartbeat, to: robot/relayed }
metrics:
  listen: 127.0.0.1:%d
`

// A message published in the process carries the time it was published:
// the relay's dispatch latency, publication to callback start, is counted
// (a message without its time has none) and is a few milliseconds at
// most.
func TestInProcessDispatchLatency(t *testing.T) {
	t.Parallel()
	port, mport := freePort(t), freePort(t)
	path := filepath.Join(t.TempDir(), "inprocess.yaml")
	writeFile(t, path, fmt.Sprintf(inProcessConfig, port, mport))
	rx := startRun(t, robotexecBin, path)
	rx.stderr.waitFor(t, startup, "serving metrics")

	metric := func(body, suffix string) (float64, bool) {
		re := regexp.MustCompile(`(?m)^robotexec_dispatch_latency_seconds_` + suffix + `\{callback="bridge",node="relay"\} (\S+)$`)
		m := re.FindStringSubmatch(body)
		if m == nil {
			return 0, false
		}
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err, m[0])
		return v, true
	}
	var count, sum float64
	deadline := time.Now().Add(10 * time.Second)
	for count < 10 {
		require.True(t, time.Now().Before(deadline), "the relay's dispatch latency counts %v callbacks after 10 s", count)
		time.Sleep(50 * time.Millisecond)
		code, body := getURL(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", mport))
		require.Equal(t, 200, code)
		var ok bool
		if count, ok = metric(body, "count"); ok {
			sum, ok = metric(body, "sum")
			require.True(t, ok, "the relay's latency sum:\n%s", body)
		}
	}
	mean := time.Duration(sum / count * float64(time.Second))
	require.Positive(t, mean)
	require.Less(t, mean, 50*time.Millisecond, "mean dispatch latency of %v callbacks", count)

	rx.signal(t, os.Interrupt)
	require.Equal(t, 0, rx.wait(t, stopWithin))
}
