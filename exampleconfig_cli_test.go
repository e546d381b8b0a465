package robotexec_test

// End-to-end test of examples/config.yaml, the README's command.

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExampleConfig(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	rx := startRun(t, robotexecBin, configOnPort(t, "examples/config.yaml", port))
	url := brokerURL(port)

	line := rx.stderr.waitFor(t, traffic, `msg="filtered imu"`)
	require.Contains(t, line, "node=imu_filter")

	r := runCmd(t, traffic, robotexecBin, nil, "echo", "-broker", url, "-timeout", "5s", "-n", "1", "robot/imu0/filtered")
	require.Equal(t, 0, r.code, "%s", r)
	topic, payload, ok := strings.Cut(strings.TrimSuffix(r.stdout, "\n"), " ")
	require.True(t, ok, "TOPIC PAYLOAD: %q", r.stdout)
	require.Equal(t, "robot/imu0/filtered", topic)
	var filtered struct {
		AZ      float64 `json:"az"`
		Samples uint64  `json:"samples"`
	}
	require.NoError(t, json.Unmarshal([]byte(payload), &filtered), "payload %s", payload)
	require.Positive(t, filtered.Samples, "the filter has blended samples: %s", payload)
	require.InDelta(t, 9.81, filtered.AZ, 0.5, "gravity on z: %s", payload)

	rx.signal(t, os.Interrupt)
	require.Equal(t, 0, rx.wait(t, stopWithin))
	requireOrdered(t, rx.stderr.all(), "robotexec running", "draining", "stopped")
}
