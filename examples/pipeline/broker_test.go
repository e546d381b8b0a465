package pipeline_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/examples/internal/exampletest"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/internal/syncbuf"
)

// The pipeline of examples/pipeline.yaml, shortened, in a running
// robotexec on a real broker: a heartbeat at 1 kHz through three stages,
// one of them slow, with the block policy. Another client sees every seq
// of the last stage in order, and the sink reports no gap and no
// disorder when robotexec stops.
func TestPipelineOverTheBroker(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{})
	last := exampletest.Listen(t, b.URL(), "pipeline/3")
	logs := &syncbuf.Buffer{}
	app := exampletest.StartApp(t, b.URL(), `executor: { workers: 2, queue_depth: 10, overflow: block }
nodes:
  - { name: source, type: heartbeat, params: { topic: pipeline/0, period: 1ms } }
  - { name: stage1, type: stage, params: { input: pipeline/0, output: pipeline/1 } }
  - { name: stage2, type: stage, params: { input: pipeline/1, output: pipeline/2, work: 2ms } }
  - { name: stage3, type: stage, params: { input: pipeline/2, output: pipeline/3 } }
  - { name: sink, type: sink, params: { input: pipeline/3 } }
`, logs)

	const want = 100
	deadline := time.After(15 * time.Second)
	for seq := uint64(1); seq <= want; seq++ {
		select {
		case m := <-last:
			var beat struct {
				Node string `json:"node"`
				Seq  uint64 `json:"seq"`
			}
			require.NoError(t, json.Unmarshal(m.Payload, &beat))
			require.Equal(t, "source", beat.Node, "the heartbeat's payload passes unchanged")
			require.Equal(t, seq, beat.Seq)
		case <-deadline:
			t.Fatalf("got %d of %d messages of the last stage within 15s", seq-1, want)
		}
	}
	exampletest.Stop(t, app)
	report := regexp.MustCompile(`msg=sink node=sink received=(\d+) last_seq=\d+ gaps=0 out_of_order=0`).FindStringSubmatch(logs.String())
	require.NotNil(t, report, "the sink's report at the end: %s", logs.String())
	received, err := strconv.Atoi(report[1])
	require.NoError(t, err)
	require.GreaterOrEqual(t, received, want, "the sink got what the other client saw, and more")
}
