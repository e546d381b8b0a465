package robotexec_test

// executor.procs through robotexec run: a config of built-in nodes on an
// external broker runs on one processor; procs sets it; a node type of
// the program's own, or the embedded broker, leaves GOMAXPROCS to Go.

import (
	"regexp"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/timers"
)

// startProcs is the procs=N of r's start line.
func startProcs(t *testing.T, r *pipelineRun) int {
	t.Helper()
	re := regexp.MustCompile(`msg="robotexec running".* procs=(\d+)`)
	l, ok := r.stderr.find(func(l string) bool { return re.MatchString(l) })
	require.True(t, ok, "a start line with procs:\n%s", r)
	n, err := strconv.Atoi(re.FindStringSubmatch(l)[1])
	require.NoError(t, err)
	return n
}

func TestRunProcs(t *testing.T) {
	t.Parallel()
	b := externalBroker(t, "embedded", broker.Config{}, mqtttest.MosquittoOptions{})
	bridge := "  - { name: a, type: bridge, params: { from: procs/in, to: procs/out } }\n"
	for _, tc := range []struct {
		name     string
		o        pipelineOptions
		one      bool // on one processor
		explicit int  // procs set
	}{
		{"built-in nodes on an external broker", pipelineOptions{broker: b.URL(), nodes: bridge}, true, 0},
		{"procs set", pipelineOptions{broker: b.URL(), executor: ", procs: 3", nodes: bridge}, false, 3},
		{"a node type of the program's", pipelineOptions{broker: b.URL(),
			nodes: bridge + "  - { name: s, type: stage, params: { input: procs/out, output: procs/staged } }\n"}, false, 0},
		{"the embedded broker", pipelineOptions{broker: "embedded", nodes: bridge}, false, 0},
		{"pinned workers", pipelineOptions{broker: b.URL(), executor: ", pin_workers: true", nodes: bridge}, false, 0},
		{"the live view", pipelineOptions{broker: b.URL(), extra: "view: { listen: \"127.0.0.1:0\" }\n", nodes: bridge}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := startPipeline(t, tc.o)
			got := subscribeBroker(t, r.url, "procs/out")
			switch n := startProcs(t, r); {
			case tc.one:
				require.Equal(t, 1, n, "%s", r)
			case tc.explicit > 0:
				require.Equal(t, tc.explicit, n, "%s", r)
			case timers.PreciseSupported():
				// Raised above the 2 workers for the precise timer source.
				require.GreaterOrEqual(t, n, 3, "%s", r)
			default:
				// Go's choice, one per CPU, even where that is one.
				require.Equal(t, runtime.NumCPU(), n, "%s", r)
			}
			// The bridge works on any.
			publishUntil(t, r.url, func() bool {
				select {
				case <-got:
					return true
				default:
					return false
				}
			}, pubMsg{"procs/in", "x"})
		})
	}
}
