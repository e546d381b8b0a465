package nodetest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/nodes"
	_ "github.com/robotexec/robotexec/nodes/builtin" // heartbeat, bridge
	"github.com/robotexec/robotexec/nodes/nodetest"
	"github.com/robotexec/robotexec/subscribers"
)

// A heartbeat beats once a period of the simulated clock, Advance by
// Advance; a bridge forwards what Publish sends; Published and
// PublishedJSON see both, and a node that cannot build says why.
func TestRigRunsNodesOnTheSimulatedClock(t *testing.T) {
	r := nodetest.New(t)
	start := r.Now()
	r.MustBuild("beat", "heartbeat", "{ topic: hb, period: 100ms }")
	r.MustBuild("fwd", "bridge", "from: in\nto: out") // block style too
	type beat struct {
		Node string
		Seq  uint64
		Time time.Time
	}

	r.Advance(50 * time.Millisecond)
	require.Empty(t, r.Published("hb"))
	for range 3 {
		r.Advance(100 * time.Millisecond)
	}
	beats := nodetest.PublishedJSON[beat](r, "hb")
	require.Len(t, beats, 3)
	for i, b := range beats {
		require.Equal(t, "beat", b.Node)
		require.Equal(t, uint64(i+1), b.Seq)
		require.Equal(t, start.Add(time.Duration(i+1)*100*time.Millisecond), b.Time, "beats carry the simulated time")
	}
	require.Equal(t, start.Add(350*time.Millisecond), r.Now())
	r.Publish("in", "a", "b")
	require.Equal(t, []string{"a", "b"}, r.Published("out"))
	require.Empty(t, r.Published("in"), "what the test publishes is not the nodes'")
	require.Len(t, r.Published("#"), 5, "a filter matches every topic")
	require.Equal(t, []string{"a", "b"}, r.Published("+")[3:], "hb's three beats, then out's two, in order")

	_, err := r.Build("bad", "heartbeat", "{ period: soon }")
	require.ErrorContains(t, err, "node bad (heartbeat)")
	var be *nodes.BuildError
	require.ErrorAs(t, err, &be)
	_, err = r.Build("none", "no_such_type", "")
	require.ErrorIs(t, err, nodes.ErrUnknownType)
}

// The options set the queues' defaults: with a depth of 2 and
// drop_oldest, a burst of five leaves the last two; by default (depth 10,
// block at QoS 1) all five pass.
func TestRigOptionsSetTheQueues(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []nodetest.Option
		want []string
	}{
		{"depth 2, drop_oldest", []nodetest.Option{nodetest.Depth(2), nodetest.Overflow(subscribers.DropOldest)}, []string{"4", "5"}},
		{"defaults", nil, []string{"1", "2", "3", "4", "5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := nodetest.New(t, tc.opts...)
			r.MustBuild("fwd", "bridge", "{ from: in, to: out }")
			r.Publish("in", "1", "2", "3", "4", "5")
			require.Equal(t, tc.want, r.Published("out"))
		})
	}
}

// Logs has what the nodes logged, without the wall clock's time.
func TestRigLogs(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("total", "example_total", "{ input: in, output: out }")
	r.Publish("in", "x")
	require.Contains(t, r.Logs(), `level=WARN msg="payload does not decode" node=total topic=in`)
	require.NotContains(t, r.Logs(), "time=")
}

// failures records what a Rig reports to its test.
type failures struct {
	testing.TB
	msgs []string
}

func (f *failures) Helper() {}

func (f *failures) Fatalf(format string, args ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}

// A rig fails its test for a bad topic, params that are not YAML, a node
// that must build and does not, and a payload that does not decode; with
// no test, it panics.
func TestRigFailures(t *testing.T) {
	f := &failures{TB: t}
	r := nodetest.New(f)
	r.Publish("a/+", "x")
	_, err := r.Build("n", "heartbeat", "{ topic: [")
	require.Error(t, err)
	r.MustBuild("n", "heartbeat", "{ period: 1s }")
	r.MustBuild("beat", "heartbeat", "{ topic: hb, period: 1s }")
	r.Advance(time.Second)
	require.Empty(t, nodetest.PublishedJSON[int](r, "hb"))
	require.Len(t, f.msgs, 4, "%q", f.msgs)
	for i, want := range []string{`publish on "a/+"`, `params "{ topic: ["`, "node n (heartbeat)", "beat published on hb at 2026-01-01T00:00:01Z"} {
		require.Contains(t, f.msgs[i], want)
	}

	defer func() {
		require.Contains(t, fmt.Sprint(recover()), `nodetest: publish on "a/+"`)
	}()
	nodetest.New(nil).Publish("a/+")
	t.Fatal("no panic")
}
