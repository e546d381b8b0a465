package pipeline_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	_ "github.com/robotexec/robotexec/examples/pipeline"
	"github.com/robotexec/robotexec/nodes/nodetest"
	"github.com/robotexec/robotexec/subscribers"
)

// newRig returns a rig whose queues hold what a test publishes at once.
func newRig(t *testing.T) *nodetest.Rig {
	return nodetest.New(t, nodetest.Depth(1000), nodetest.Overflow(subscribers.Block))
}

func seqs(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf(`{"node":"src", "seq":%d}`, i))
	}
	return out
}

// Stages pass each payload on unchanged, byte for byte and in order, one
// after the other, a stage with work too; the sink at the end counts them
// all, without gaps or disorder, and says so when the node shuts down.
func TestStagesPassMessagesOnToTheSink(t *testing.T) {
	r := newRig(t)
	r.MustBuild("stage1", "stage", "{ input: p/0, output: p/1 }")
	r.MustBuild("stage2", "stage", "{ input: p/1, output: p/2, work: 1ms }")
	sink := r.MustBuild("sink", "sink", "{ input: p/2 }")

	r.Publish("p/0", seqs(1, 30)...)
	require.Equal(t, seqs(1, 30), r.Published("p/1"))
	sink.Shutdown()
	require.Contains(t, r.Logs(), "msg=sink node=sink received=30 last_seq=30 gaps=0 out_of_order=0")
}

// The sink counts the seq numbers skipped, and those that come again or
// late; payloads that are not JSON are not counted.
func TestSinkCountsGapsAndDisorder(t *testing.T) {
	r := newRig(t)
	sink := r.MustBuild("sink", "sink", "{ input: beat, log: 1s }")
	r.Publish("beat", `{"seq":1}`, `{"seq":2}`, `{"seq":5}`, `{"seq":4}`, `{"seq":5}`, `not json`, `{"seq":6}`)
	require.NotContains(t, r.Logs(), "msg=sink", "no report before its period")

	r.Advance(time.Second)
	require.Contains(t, r.Logs(), "msg=sink node=sink received=6 last_seq=6 gaps=2 out_of_order=2")

	r.Publish("beat", `{"seq":9}`)
	sink.Shutdown()
	require.Contains(t, r.Logs(), "received=7 last_seq=9 gaps=4 out_of_order=2")
	require.Equal(t, 2, strings.Count(r.Logs(), "msg=sink"))
}

// Without log the sink reports only at the end.
func TestSinkWithoutLogReportsAtTheEnd(t *testing.T) {
	r := newRig(t)
	sink := r.MustBuild("sink", "sink", "{ input: beat }")
	r.Publish("beat", seqs(1, 3)...)
	r.Advance(time.Minute)
	require.NotContains(t, r.Logs(), "msg=sink")
	sink.Shutdown()
	require.Contains(t, r.Logs(), "received=3 last_seq=3 gaps=0 out_of_order=0")
}

func TestPipelineRejectsBadParams(t *testing.T) {
	for _, tc := range []struct{ typ, params, want string }{
		{"stage", "{ input: a }", "input and output are required"},
		{"stage", "{ output: b }", "input and output are required"},
		{"stage", "{ input: a, output: b, work: -1ms }", "work -1ms is negative"},
		{"stage", "{ input: a, output: b, work: lots }", `"lots" is not a duration`},
		{"stage", "{ input: a, output: b/+ }", `"b/+"`},
		{"sink", "{ log: 1s }", "input is required"},
		{"sink", "{ input: a, every: 1s }", "every: unknown key"},
	} {
		t.Run(tc.typ+" "+tc.params, func(t *testing.T) {
			_, err := newRig(t).Build("x", tc.typ, tc.params)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "node x ("+tc.typ+")")
		})
	}
}
