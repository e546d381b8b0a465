package exampletest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/examples/internal/exampletest"
	_ "github.com/robotexec/robotexec/nodes/builtin" // heartbeat, bridge
	"github.com/robotexec/robotexec/subscribers"
)

// A heartbeat beats once a period of the simulated clock, Advance by
// Advance; a bridge forwards what Publish sends; the collectors see both,
// and a node that cannot build says why.
func TestRigRunsNodesOnTheSimulatedClock(t *testing.T) {
	r := exampletest.NewRig(t, 10, subscribers.DropOldest)
	r.MustBuild("beat", "heartbeat", "{ topic: hb, period: 100ms }")
	r.MustBuild("fwd", "bridge", "{ from: in, to: out }")
	type beat struct {
		Node string
		Seq  uint64
		Time time.Time
	}
	beats := exampletest.CollectJSON[beat](r, "hb")
	out := exampletest.CollectPayloads(r, "out")

	r.Advance(50 * time.Millisecond)
	require.Empty(t, beats())
	for range 3 {
		r.Advance(100 * time.Millisecond)
	}
	require.Len(t, beats(), 3)
	for i, b := range beats() {
		require.Equal(t, "beat", b.Node)
		require.Equal(t, uint64(i+1), b.Seq)
		require.True(t, b.Time.After(exampletest.Epoch), "beats carry the simulated time")
	}
	r.Publish("in", "a", "b")
	require.Equal(t, []string{"a", "b"}, out())

	_, err := r.Build("bad", "heartbeat", "{ period: soon }")
	require.ErrorContains(t, err, "node bad (heartbeat)")
}
