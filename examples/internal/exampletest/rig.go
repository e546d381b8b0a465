package exampletest

import (
	"encoding/json"
	"github.com/robotexec/robotexec/internal/syncbuf"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// Epoch is where a Rig's simulated clock starts.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Rig runs nodes through the node API on a simulated clock and an
// in-process router, spun by hand on the test's goroutine, as package
// nodes' tests do.
type Rig struct {
	T     testing.TB
	Clock *timers.Sim
	Ex    *executor.Executor // one worker, spun by Publish and Advance
	Bus   *subscribers.Router
	Env   *nodes.Env
	Logs  *Buffer // what the nodes log
}

// NewRig returns a rig whose nodes' subscriptions have queues of depth
// with the overflow policy, at QoS 1.
func NewRig(t testing.TB, depth int, overflow subscribers.Policy) *Rig {
	r := &Rig{T: t, Clock: timers.NewSim(Epoch), Bus: new(subscribers.Router), Logs: &Buffer{}}
	logger := slog.New(slog.NewTextHandler(r.Logs, nil))
	r.Ex = executor.New(executor.Options{Workers: 1, Clock: r.Clock, Logger: logger})
	r.Env = &nodes.Env{Executor: r.Ex, Router: r.Bus, Logger: logger, QoS: 1, Depth: depth, Overflow: &overflow}
	return r
}

// Build builds node name of type typ with params in YAML flow style, as
// a config's nodes list gives them.
func (r *Rig) Build(name, typ, params string) (*nodes.Node, error) {
	cfg, err := config.Parse("test.yaml", []byte("nodes:\n  - { name: n, type: t, params: "+params+" }\n"), nil)
	require.NoError(r.T, err)
	return nodes.Build(r.Env, nodes.Spec{Name: name, Type: typ, Params: cfg.Nodes[0].Params})
}

// MustBuild is Build for a node that must build.
func (r *Rig) MustBuild(name, typ, params string) *nodes.Node {
	n, err := r.Build(name, typ, params)
	require.NoError(r.T, err)
	return n
}

// Publish publishes payloads on topic, in order, then runs what is ready.
func (r *Rig) Publish(topic string, payloads ...string) {
	p, err := r.Bus.Publisher(topic)
	require.NoError(r.T, err)
	for _, payload := range payloads {
		require.NoError(r.T, p.Publish([]byte(payload)))
	}
	r.Ex.SpinAll()
}

// Advance advances the clock by d, then runs what fell due.
func (r *Rig) Advance(d time.Duration) {
	r.Clock.Advance(d)
	r.Ex.SpinAll()
}

// CollectPayloads collects the payloads published on topic.
func CollectPayloads(r *Rig, topic string) func() []string {
	var got []string
	r.subscribe(topic, func(m subscribers.Message) { got = append(got, string(m.Payload)) })
	return func() []string { return got }
}

// CollectJSON decodes what is published on topic into values of T.
func CollectJSON[T any](r *Rig, topic string) func() []T {
	var got []T
	r.subscribe(topic, func(m subscribers.Message) {
		var v T
		require.NoError(r.T, json.Unmarshal(m.Payload, &v))
		got = append(got, v)
	})
	return func() []T { return got }
}

func (r *Rig) subscribe(topic string, f func(subscribers.Message)) {
	_, err := r.Ex.NewOwner("collector", nil).Subscribe(r.Bus, topic, f, executor.Depth(1000))
	require.NoError(r.T, err)
}

// Buffer is a bytes.Buffer safe for concurrent writes, for logs.
type Buffer = syncbuf.Buffer
