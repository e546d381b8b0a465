package robotexec_test

import (
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// TestRunRetainedAtStartup: a robot's config, kept retained at an
// external broker, and two nodes of one process that subscribe to it
// from the start (two bridges of cfg/mode): each gets it once, then the
// live update once.
func TestRunRetainedAtStartup(t *testing.T) {
	t.Parallel()
	for _, name := range brokerNames {
		for _, protocol := range []string{"5", "3.1.1"} {
			t.Run(name+"/"+protocol, func(t *testing.T) {
				t.Parallel()
				testRetainedAtStartup(t, externalBroker(t, name, broker.Config{}, mqtttest.MosquittoOptions{}), protocol)
			})
		}
	}
}

func testRetainedAtStartup(t *testing.T, b mqtttest.Broker, protocol string) {
	pub := func(payload string, retained bool) {
		args := []string{"pub", "-broker", b.URL(), "-timeout", "5s", "-qos", "1"}
		if retained {
			args = append(args, "-retain")
		}
		r := runCmd(t, quickExit, robotexecBin, nil, append(args, "cfg/mode", payload)...)
		require.Equal(t, 0, r.code, "%s", r)
	}
	pub("auto", true)
	r := startPipeline(t, pipelineOptions{broker: b.URL(), inProcess: true, mqtt: ", protocol: " + protocol,
		nodes: "  - { name: a, type: bridge, params: { from: cfg/mode, to: out/a } }\n" +
			"  - { name: b, type: bridge, params: { from: cfg/mode, to: out/b } }\n"})
	runs := func(node string) float64 {
		return callbackRuns(r.metrics, node)
	}
	both := func(n float64) func() bool {
		return func() bool { return runs("a") >= n && runs("b") >= n }
	}
	require.Eventually(t, both(1), traffic, 20*time.Millisecond, "each node gets the retained message")
	pub("manual", false)
	require.Eventually(t, both(2), traffic, 20*time.Millisecond, "each node gets the live one")
	// Anything else from the broker came before the live message.
	require.Equal(t, []float64{2, 2}, []float64{runs("a"), runs("b")}, "runs of a and b")
	r.signal(t, os.Interrupt)
	require.Equal(t, 0, r.wait(t, stopWithin))
}

// callbackRuns scrapes the run's metrics for how many times node's
// bridge callback ran: 0 before the metrics answer.
func callbackRuns(metrics, node string) float64 {
	resp, err := http.Get(metrics)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	series := `robotexec_callback_duration_seconds_count{callback="bridge",node="` + node + `"}`
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}
