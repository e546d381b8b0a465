package refsys_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/examples/referencesystem/refsys"
	"github.com/robotexec/robotexec/nodes/nodetest"
)

// published decodes what was published on topic.
func published(t *testing.T, r *nodetest.Rig, topic string) []refsys.Message {
	t.Helper()
	var out []refsys.Message
	for _, p := range r.Published(topic) {
		var m refsys.Message
		require.NoError(t, m.UnmarshalBinary([]byte(p)))
		out = append(out, m)
	}
	return out
}

// names returns the node names of m's history, in order.
func names(m refsys.Message) []string {
	var out []string
	for _, e := range m.Entries() {
		out = append(out, e.Name())
	}
	return out
}

// wire returns the wire form of m.
func wire(t *testing.T, m *refsys.Message) string {
	b, err := m.MarshalBinary()
	require.NoError(t, err)
	return string(b)
}

// Two sensors through a transform each into a fusion: the fusion
// publishes once both inputs have a sample, with both histories merged
// and its own entry last, stamped at its callback's start; the crunch's
// result is in Data[0].
func TestSensorsTransformsFusion(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("A", refsys.TypeSensor, "{ period: 10ms }")
	r.MustBuild("B", refsys.TypeSensor, "{ topic: b, period: 20ms }")
	r.MustBuild("TA", refsys.TypeTransform, "{ input: A, crunch: 10 }")
	r.MustBuild("TB", refsys.TypeTransform, "{ input: b, output: tb, crunch: 100 }")
	r.MustBuild("F", refsys.TypeFusion, "{ inputs: [TA, tb], crunch: 10 }")

	r.Advance(10 * time.Millisecond)
	require.Len(t, published(t, r, "TA"), 1)
	require.Empty(t, published(t, r, "F"), "one input has no sample yet")
	r.Advance(10 * time.Millisecond)

	ta, tb := published(t, r, "TA"), published(t, r, "tb")
	require.Len(t, ta, 2)
	require.Len(t, tb, 1)
	require.Equal(t, int64(25), tb[0].Data[0])
	require.Equal(t, []string{"A", "TA"}, names(ta[1]))
	require.Equal(t, uint32(1), ta[1].Sequence())

	f := published(t, r, "F")
	require.Len(t, f, 1)
	require.Equal(t, []string{"A", "TA", "B", "TB", "F"}, names(f[0]))
	require.Equal(t, int64(4), f[0].Data[0])
	last := f[0].Entries()[4]
	require.Equal(t, uint64(r.Now().UnixNano()), last.Stamp)
	require.Equal(t, uint32(0), last.Sequence)
	require.Equal(t, uint32(0), last.Dropped, "TA's seq 0 was replaced by its seq 1 in the cache; the original counts from 0")
}

// A transform's queue keeps the latest message only (keep-last 1): of
// four queued at once it runs the last, and counts the skipped samples
// in its entry, as the original counts them (from sequence 0).
func TestTransformKeepsLast(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("T", refsys.TypeTransform, "{ input: in, crunch: 0 }")
	var ms []string
	for seq := range uint32(4) {
		var m refsys.Message
		m.Add("S", seq, 0, 1)
		ms = append(ms, wire(t, &m))
	}
	r.Publish("in", ms...)
	out := published(t, r, "T")
	require.Len(t, out, 1)
	require.Equal(t, uint32(2), out[0].Entries()[1].Dropped)
	require.Equal(t, int64(2), out[0].Data[0], "Crunch(0), as the original's")
}

// A cyclic node publishes every period, also with nothing cached, the
// latest message of each input merged in, each used once.
func TestCyclic(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("P", refsys.TypeCyclic, "{ inputs: [x, y], period: 100ms, crunch: 10 }")
	var a, b refsys.Message
	a.Add("X", 0, 0, 1)
	b.Add("Y", 5, 0, 2)
	r.Publish("x", wire(t, &a))
	r.Publish("y", wire(t, &b))
	r.Advance(100 * time.Millisecond)
	r.Advance(100 * time.Millisecond)
	out := published(t, r, "P")
	require.Len(t, out, 2)
	require.Equal(t, []string{"X", "Y", "P"}, names(out[0]))
	require.Equal(t, uint32(4), out[0].Entries()[2].Dropped, "Y's seq 5 after none: 4 missed")
	require.Equal(t, []string{"P"}, names(out[1]), "the caches were cleared")
	require.Equal(t, uint32(1), out[1].Sequence())
}

// An intersection's connections are independent transforms whose entries
// carry the node's name, each with its own sequence and crunch.
func TestIntersection(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("I", refsys.TypeIntersection,
		"{ connections: [{ input: a, output: I }, { input: b, output: I2, crunch: 10 }] }")
	var m refsys.Message
	m.Add("S", 0, 0, 1)
	r.Publish("a", wire(t, &m))
	r.Publish("b", wire(t, &m), wire(t, &m))
	require.Equal(t, []string{"S", "I"}, names(published(t, r, "I")[0]))
	require.Equal(t, int64(564), published(t, r, "I")[0].Data[0])
	i2 := published(t, r, "I2")
	require.Len(t, i2, 1, "keep-last 1")
	require.Equal(t, int64(4), i2[0].Data[0])
	require.Equal(t, uint32(0), i2[0].Sequence())

	r.MustBuild("J", refsys.TypeIntersection, "{ crunch: 10, connections: [{ input: c, output: J }] }")
	r.Publish("c", wire(t, &m))
	require.Equal(t, int64(4), published(t, r, "J")[0].Data[0], "the node's crunch, for a connection without one")
}

// A connection's priority is its callback's: of two connections ready
// together, the one with priority 1 runs first, whatever their order.
func TestIntersectionPriority(t *testing.T) {
	for _, c := range []struct {
		params string
		first  string
	}{
		{"{ crunch: 0, connections: [{ input: a, output: I }, { input: a, output: I2 }] }", "node=CI "},
		{"{ crunch: 0, connections: [{ input: a, output: I }, { input: a, output: I2, priority: 1 }] }", "node=CI2 "},
	} {
		r := nodetest.New(t)
		r.MustBuild("X", refsys.TypeIntersection, c.params)
		r.MustBuild("CI", refsys.TypeCommand, "{ input: I, warmup: 0, report: 0s }")
		r.MustBuild("CI2", refsys.TypeCommand, "{ input: I2, warmup: 0, report: 0s }")
		var m refsys.Message
		m.Add("S", 0, 0, 1)
		r.Publish("a", wire(t, &m))
		logs := r.Logs()
		require.Equal(t, 1, strings.Count(logs, "node=CI "), "%s", logs)
		require.Equal(t, 1, strings.Count(logs, "node=CI2 "), "%s", logs)
		require.True(t, strings.HasPrefix(logs[strings.Index(logs, "node="):], c.first), "%s: %s first:\n%s", c.params, c.first, logs)
	}
}

// A command node logs the statistics after its warm-up, every report
// and when it shuts down; with report 0, after every message.
func TestCommandLogs(t *testing.T) {
	r := nodetest.New(t)
	cmd := r.MustBuild("C", refsys.TypeCommand, "{ input: in, warmup: 2, report: 1s }")
	r.MustBuild("E", refsys.TypeCommand, "{ input: in, warmup: 0, report: 0s }")
	for seq := range uint32(3) {
		m := refsys.Message{}
		m.Add("FrontLidarDriver", seq, 0, uint64(r.Now().Add(-20*time.Millisecond).UnixNano()))
		m.Add("ObjectCollisionEstimator", seq, 0, uint64(r.Now().Add(-5*time.Millisecond).UnixNano()))
		r.Publish("in", wire(t, &m))
	}
	require.Equal(t, 3, strings.Count(r.Logs(), "node=E"), "E logs after each message")
	require.NotContains(t, r.Logs(), "node=C")
	r.Advance(time.Second)
	require.Contains(t, r.Logs(), `level=INFO msg=statistics node=C samples=1 latency_ms.n=1 latency_ms.min=20 latency_ms.mean=20 latency_ms.max=20 latency_ms.std=0 `+
		`hot_path="FrontLidarDriver/RearLidarDriver -> ObjectCollisionEstimator" hot_path_latency_ms.n=1 hot_path_latency_ms.min=15 hot_path_latency_ms.mean=15 hot_path_latency_ms.max=15 hot_path_latency_ms.std=0 `+
		`hot_path_drops.n=1 hot_path_drops.min=0 hot_path_drops.mean=0 hot_path_drops.max=0 hot_path_drops.std=0 missed=0`)
	cmd.Shutdown()
	require.Equal(t, 2, strings.Count(r.Logs(), "node=C"))
}

// Bad params fail the node with what is wrong.
func TestParamsErrors(t *testing.T) {
	for _, c := range []struct{ typ, params, want string }{
		{refsys.TypeSensor, "{}", "period is required"},
		{refsys.TypeTransform, "{ crunch: 10 }", "input is required"},
		{refsys.TypeFusion, "{ inputs: [a] }", `inputs: want two topics, not ["a"]`},
		{refsys.TypeCyclic, "{ inputs: [a] }", "period is required"},
		{refsys.TypeIntersection, "{}", "connections: at least one is required"},
		{refsys.TypeIntersection, "{ connections: [{ input: a }] }", "connections[0]: input and output are required"},
		{refsys.TypeIntersection, "{ connections: [{ input: a, output: b, priority: -1 }] }", "connections[0]: priority -1 is negative"},
		{refsys.TypeCommand, "{ input: a, report: -1s }", "report must not be negative"},
		{refsys.TypeTransform, "{ input: a, crunch: -1 }", `params.crunch: "-1" is out of range`},
	} {
		_, err := nodetest.New(t).Build("n", c.typ, c.params)
		require.ErrorContains(t, err, c.want, "%s %s", c.typ, c.params)
	}
}

// A payload that is not a reference system message is logged and
// skipped.
func TestBadPayload(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("T", refsys.TypeTransform, "{ input: in }")
	r.Publish("in", "hello")
	require.Empty(t, r.Published("T"))
	require.Contains(t, r.Logs(), `level=WARN msg="not a reference system message" node=T topic=in err="refsys: a message has 4096 bytes, not 5"`)
}
