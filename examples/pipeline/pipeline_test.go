package pipeline_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/config"
	_ "github.com/robotexec/robotexec/examples/pipeline"
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// rig runs nodes through the node API on a simulated clock and the
// in-process router, spun by hand, as package nodes' tests do.
type rig struct {
	t     *testing.T
	clock *timers.Sim
	ex    *executor.Executor
	bus   *subscribers.Router
	env   *nodes.Env
	logs  *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newRig(t *testing.T) *rig {
	r := &rig{t: t, clock: timers.NewSim(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), bus: new(subscribers.Router), logs: &lockedBuffer{}}
	logger := slog.New(slog.NewTextHandler(r.logs, nil))
	r.ex = executor.New(executor.Options{Workers: 1, Clock: r.clock, Logger: logger})
	r.env = &nodes.Env{Executor: r.ex, Router: r.bus, Logger: logger, QoS: 1, Depth: 1000, Overflow: subscribers.Block}
	return r
}

// build builds node name of type typ with params in YAML flow style.
func (r *rig) build(name, typ, params string) (*nodes.Node, error) {
	cfg, err := config.Parse("test.yaml", []byte("nodes:\n  - { name: n, type: t, params: "+params+" }\n"), nil)
	require.NoError(r.t, err)
	return nodes.Build(r.env, nodes.Spec{Name: name, Type: typ, Params: cfg.Nodes[0].Params})
}

func (r *rig) mustBuild(name, typ, params string) *nodes.Node {
	n, err := r.build(name, typ, params)
	require.NoError(r.t, err)
	return n
}

func (r *rig) collect(topic string) func() []string {
	var got []string
	_, err := r.ex.NewOwner("collector", nil).Subscribe(r.bus, topic, func(m subscribers.Message) {
		got = append(got, string(m.Payload))
	}, executor.Depth(1000))
	require.NoError(r.t, err)
	return func() []string { return got }
}

func (r *rig) publish(topic string, payloads ...string) {
	p, err := r.bus.Publisher(topic)
	require.NoError(r.t, err)
	for _, payload := range payloads {
		require.NoError(r.t, p.Publish([]byte(payload)))
	}
	r.ex.SpinAll()
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
	r.mustBuild("stage1", "stage", "{ input: p/0, output: p/1 }")
	r.mustBuild("stage2", "stage", "{ input: p/1, output: p/2, work: 1ms }")
	sink := r.mustBuild("sink", "sink", "{ input: p/2 }")
	mid := r.collect("p/1")

	r.publish("p/0", seqs(1, 30)...)
	require.Equal(t, seqs(1, 30), mid())
	sink.Shutdown()
	require.Contains(t, r.logs.String(), "msg=sink node=sink received=30 last_seq=30 gaps=0 out_of_order=0")
}

// The sink counts the seq numbers skipped, and those that come again or
// late; payloads that are not JSON are not counted.
func TestSinkCountsGapsAndDisorder(t *testing.T) {
	r := newRig(t)
	sink := r.mustBuild("sink", "sink", "{ input: beat, log: 1s }")
	r.publish("beat", `{"seq":1}`, `{"seq":2}`, `{"seq":5}`, `{"seq":4}`, `{"seq":5}`, `not json`, `{"seq":6}`)
	require.NotContains(t, r.logs.String(), "msg=sink", "no report before its period")

	r.clock.Advance(time.Second)
	r.ex.SpinAll()
	require.Contains(t, r.logs.String(), "msg=sink node=sink received=6 last_seq=6 gaps=2 out_of_order=2")

	r.publish("beat", `{"seq":9}`)
	sink.Shutdown()
	require.Contains(t, r.logs.String(), "received=7 last_seq=9 gaps=4 out_of_order=2")
	require.Equal(t, 2, strings.Count(r.logs.String(), "msg=sink"))
}

// Without log the sink reports only at the end.
func TestSinkWithoutLogReportsAtTheEnd(t *testing.T) {
	r := newRig(t)
	sink := r.mustBuild("sink", "sink", "{ input: beat }")
	r.publish("beat", seqs(1, 3)...)
	r.clock.Advance(time.Minute)
	r.ex.SpinAll()
	require.NotContains(t, r.logs.String(), "msg=sink")
	sink.Shutdown()
	require.Contains(t, r.logs.String(), "received=3 last_seq=3 gaps=0 out_of_order=0")
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
			_, err := newRig(t).build("x", tc.typ, tc.params)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "node x ("+tc.typ+")")
		})
	}
}
