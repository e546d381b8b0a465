package nodes_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotexec/robotexec/internal/syncbuf"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// rig is a node environment on a simulated clock and an in-process bus,
// spun by hand.
type rig struct {
	clock *timers.Sim
	ex    *executor.Executor
	bus   *subscribers.Router
	env   *nodes.Env
	logs  *syncBuffer
}

// syncBuffer collects the nodes' logs.
type syncBuffer = syncbuf.Buffer

func newRig(t *testing.T) *rig {
	r := &rig{clock: timers.NewSim(epoch), bus: new(subscribers.Router), logs: &syncBuffer{}}
	logger := slog.New(slog.NewTextHandler(r.logs, nil))
	r.ex = executor.New(executor.Options{Workers: 2, Clock: r.clock, Logger: logger})
	r.env = &nodes.Env{Executor: r.ex, Router: r.bus, Logger: logger, QoS: 1, Depth: 10}
	return r
}

// params parses a node's params from YAML.
func params(t *testing.T, body string) config.Params {
	t.Helper()
	cfg, err := config.Parse("test.yaml", []byte("nodes:\n  - name: n\n    type: t\n    params:\n"+indent(body)), nil)
	require.NoError(t, err)
	return cfg.Nodes[0].Params
}

func indent(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		b.WriteString("      " + line + "\n")
	}
	return b.String()
}

var typeSeq atomic.Int64

// register registers a node type under a fresh name and returns it.
func register(ctor nodes.Constructor) string {
	name := fmt.Sprintf("test_type_%d", typeSeq.Add(1))
	nodes.Register(name, "a test type", ctor)
	return name
}

func (r *rig) collect(t *testing.T, filter string) *[]subscribers.Message {
	t.Helper()
	var got []subscribers.Message
	_, err := r.ex.NewOwner("collector", nil).Subscribe(r.bus, filter, func(ctx context.Context, m subscribers.Message) { got = append(got, m) }, executor.Depth(100))
	require.NoError(t, err)
	return &got
}

func TestRegistry(t *testing.T) {
	name := register(func(*nodes.Node) error { return nil })
	info, ok := nodes.Lookup(name)
	require.True(t, ok)
	require.Equal(t, "a test type", info.Description)
	types := nodes.Types()
	require.True(t, slices.ContainsFunc(types, func(ti nodes.TypeInfo) bool { return ti.Name == name }))
	for i := 1; i < len(types); i++ {
		require.Less(t, types[i-1].Name, types[i].Name)
	}
	require.PanicsWithValue(t, fmt.Sprintf("nodes: node type %q registered twice", name), func() {
		nodes.Register(name, "", func(*nodes.Node) error { return nil })
	})
	require.Panics(t, func() { nodes.Register("", "", func(*nodes.Node) error { return nil }) })
	require.Panics(t, func() { nodes.Register("x_nil", "", nil) })
	_, ok = nodes.Lookup("no_such_type")
	require.False(t, ok)
}

func TestBuildUnknownType(t *testing.T) {
	r := newRig(t)
	_, err := nodes.Build(context.Background(), r.env, nodes.Spec{Name: "n", Type: "no_such_type"})
	require.ErrorIs(t, err, nodes.ErrUnknownType)
	var be *nodes.BuildError
	require.ErrorAs(t, err, &be)
	require.Equal(t, "n", be.Node)
	require.Contains(t, err.Error(), "known: ")
}

type filterParams struct {
	Input  string        `yaml:"input"`
	Output string        `yaml:"output"`
	Alpha  float64       `yaml:"alpha"`
	Period time.Duration `yaml:"period"`
}

type sample struct{ AX, AY, AZ float64 }

// The imu_filter node of the README's "Your first node" (and
// docs/nodes.md, A node type), on the in-process bus and the simulated
// clock.
func TestSpecNodeFiltersAndPublishes(t *testing.T) {
	r := newRig(t)
	typ := register(func(n *nodes.Node) error {
		p := filterParams{Alpha: 0.5, Period: 50 * time.Millisecond}
		if err := n.Params(&p); err != nil {
			return err
		}
		out := n.Publisher(p.Output)
		var avg sample
		nodes.Subscribe(n, p.Input, func(ctx context.Context, s sample) { avg.AX += p.Alpha * (s.AX - avg.AX) })
		n.Timer(p.Period, func(ctx context.Context, _ timers.Event) { out.PublishJSON(ctx, avg) })
		return nil
	})
	_, err := nodes.Build(context.Background(), r.env, nodes.Spec{Name: "imu", Type: typ, Params: params(t, "input: imu/raw\noutput: imu/filtered\nperiod: 100ms")})
	require.NoError(t, err)
	got := r.collect(t, "imu/filtered")

	pub, _ := r.bus.Publisher("imu/raw")
	pub.Publish(context.Background(), []byte(`{"AX": 4}`))
	pub.Publish(context.Background(), []byte(`not json`))
	pub.Publish(context.Background(), []byte(`{"AX": 8}`))
	r.ex.SpinAll()
	r.clock.Advance(100 * time.Millisecond)
	r.ex.SpinAll()
	require.Len(t, *got, 1)
	require.JSONEq(t, `{"AX":5,"AY":0,"AZ":0}`, string((*got)[0].Payload))
	require.Contains(t, r.logs.String(), "payload does not decode")
	require.Contains(t, r.logs.String(), "node=imu")
}

func TestSubscribeJSONCountsMalformedAndRateLimitsLogs(t *testing.T) {
	r := newRig(t)
	var sub *subscribers.Subscription
	calls := 0
	typ := register(func(n *nodes.Node) error {
		sub = nodes.Subscribe(n, "in", func(ctx context.Context, v map[string]int) { calls++ }, executor.Depth(1000))
		return nil
	})
	_, err := nodes.Build(context.Background(), r.env, nodes.Spec{Name: "n", Type: typ})
	require.NoError(t, err)
	pub, _ := r.bus.Publisher("in")
	for range 500 {
		pub.Publish(context.Background(), []byte("{bad"))
	}
	pub.Publish(context.Background(), []byte(`{"a":1}`))
	r.ex.SpinAll()
	require.Equal(t, 1, calls)
	require.Equal(t, uint64(500), sub.Stats().Dropped[subscribers.Malformed])
	require.Equal(t, 1, strings.Count(r.logs.String(), "payload does not decode"), "a flood logs one line a second")
}

func TestRegistrationErrorsFailTheNode(t *testing.T) {
	r := newRig(t)
	var pub *subscribers.Publisher
	typ := register(func(n *nodes.Node) error {
		n.Subscribe("a/#/b", func(ctx context.Context, _ subscribers.Message) {})
		pub = n.Publisher("x/+")
		n.Timer(0, func(ctx context.Context, _ timers.Event) {})
		return nil
	})
	_, err := nodes.Build(context.Background(), r.env, nodes.Spec{Name: "bad", Type: typ})
	require.Error(t, err)
	var be *nodes.BuildError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Errs, 3)
	require.Contains(t, err.Error(), "node bad (")
	require.Contains(t, err.Error(), `"a/#/b"`)
	require.Contains(t, err.Error(), `"x/+"`)
	require.Error(t, pub.Publish(context.Background(), nil))
	require.Error(t, pub.PublishJSON(context.Background(), 1))
}

func TestConstructorErrorAndParamsErrors(t *testing.T) {
	r := newRig(t)
	typ := register(func(n *nodes.Node) error {
		var p filterParams
		if err := n.Params(&p); err != nil {
			return err
		}
		return errors.New("input is required")
	})
	_, err := nodes.Build(context.Background(), r.env, nodes.Spec{Name: "n", Type: typ, Params: params(t, "period: fast\nextra: 1")})
	require.ErrorContains(t, err, `test.yaml:5: nodes[0].params.period: "fast" is not a duration`)
	require.ErrorContains(t, err, "nodes[0].params.extra: unknown key")
	_, err = nodes.Build(context.Background(), r.env, nodes.Spec{Name: "n2", Type: typ})
	require.EqualError(t, err, "node n2 ("+typ+"): input is required")
}

func TestCallbacksOfANodeNeverOverlap(t *testing.T) {
	r := newRig(t)
	var inside, overlaps atomic.Int32
	cb := func() {
		if inside.Add(1) > 1 {
			overlaps.Add(1)
		}
		time.Sleep(50 * time.Microsecond)
		inside.Add(-1)
	}
	typ := register(func(n *nodes.Node) error {
		for i := range 4 {
			n.Subscribe(fmt.Sprintf("t/%d", i), func(ctx context.Context, _ subscribers.Message) { cb() }, executor.Depth(100))
		}
		return nil
	})
	_, err := nodes.Build(context.Background(), r.env, nodes.Spec{Name: "n", Type: typ})
	require.NoError(t, err)
	for i := range 200 {
		_, err := r.bus.Publish(context.Background(), subscribers.Message{Topic: fmt.Sprintf("t/%d", i%4)})
		require.NoError(t, err)
	}
	runToIdle(t, r.ex, 200)
	require.Zero(t, overlaps.Load())
}

// runToIdle runs the executor on its workers until want callbacks ran.
func runToIdle(t *testing.T, ex *executor.Executor, want uint64) {
	t.Helper()
	done := make(chan struct{})
	ctx, cancel := contextWithCancel()
	go func() { ex.Run(ctx); close(done) }()
	deadline := time.Now().Add(20 * time.Second)
	for ex.Stats().Runs < want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	require.GreaterOrEqual(t, ex.Stats().Runs, want)
}

func TestGroups(t *testing.T) {
	r := newRig(t)
	var groups []*executor.Group
	typ := register(func(n *nodes.Node) error {
		g := n.NewGroup(executor.Reentrant)
		groups = append(groups, g)
		n.Subscribe("r", func(ctx context.Context, _ subscribers.Message) {}, executor.InGroup(g), executor.Name("reentrant"))
		return nil
	})
	_, err := nodes.Build(context.Background(), r.env, nodes.Spec{Name: "a", Type: typ, Group: "shared"})
	require.NoError(t, err)
	_, err = nodes.Build(context.Background(), r.env, nodes.Spec{Name: "b", Type: typ, Group: "shared"})
	require.NoError(t, err)
	require.Len(t, groups, 2)
	require.Equal(t, executor.Reentrant, groups[0].Kind())
	require.Equal(t, executor.GroupKind(executor.MutuallyExclusive), executor.MutuallyExclusive)
}

func TestTimersOneShotShutdownAndAccessors(t *testing.T) {
	r := newRig(t)
	var events []string
	var node *nodes.Node
	typ := register(func(n *nodes.Node) error {
		node = n
		n.Timer(10*time.Millisecond, func(ctx context.Context, ev timers.Event) { events = append(events, "tick") })
		n.OneShot(15*time.Millisecond, func(ctx context.Context, ev timers.Event) { events = append(events, "once") })
		n.OnShutdown(func() { events = append(events, "first registered") })
		n.OnShutdown(func() { events = append(events, "last registered") })
		require.Nil(t, n.OneShot(-time.Second, func(ctx context.Context, _ timers.Event) {}))
		return nil
	})
	n, err := nodes.Build(context.Background(), r.env, nodes.Spec{Name: "n", Type: typ})
	require.Error(t, err, "a negative one-shot delay fails the node")
	require.Same(t, node, n)
	for range 4 {
		r.clock.Advance(5 * time.Millisecond)
		r.ex.SpinAll()
	}
	n.Shutdown()
	n.Shutdown() // once only
	require.Equal(t, []string{"tick", "once", "tick", "last registered", "first registered"}, events)
	require.Equal(t, "n", n.Name())
	require.Equal(t, typ, n.Spec().Type)
	require.Same(t, r.ex, n.Executor())
	require.Same(t, r.clock, n.Clock().(*timers.Sim))
	require.NotNil(t, n.Logger())
}

func TestPublisherOptionsAndCaching(t *testing.T) {
	r := newRig(t)
	var a, b, c *subscribers.Publisher
	typ := register(func(n *nodes.Node) error {
		a = n.Publisher("state", nodes.QoS(2), nodes.Retain())
		b = n.Publisher("state", nodes.QoS(2), nodes.Retain())
		c = n.Publisher("state")
		require.NoError(t, n.Publish(context.Background(), "dyn/topic", []byte("d")))
		return nil
	})
	_, err := nodes.Build(context.Background(), r.env, nodes.Spec{Name: "n", Type: typ})
	require.NoError(t, err)
	require.Same(t, a, b)
	require.NotSame(t, a, c)
	require.Equal(t, "state", a.Topic())
	require.NoError(t, a.PublishJSON(context.Background(), map[string]int{"on": 1}))
	require.Error(t, a.PublishJSON(context.Background(), make(chan int)))

	got := r.collect(t, "state") // attached after: gets the retained message
	r.ex.SpinAll()
	require.Len(t, *got, 1)
	require.Equal(t, byte(2), (*got)[0].QoS)
	require.True(t, (*got)[0].Retained)
}

// Two nodes' callbacks that need a common resource never overlap, though
// their nodes' groups would let them.
func TestNeedsSharesResourcesByName(t *testing.T) {
	r := newRig(t)
	var inside, overlaps atomic.Int32
	typ := register(func(n *nodes.Node) error {
		n.Subscribe("odom", func(ctx context.Context, _ subscribers.Message) {
			if inside.Add(1) > 1 {
				overlaps.Add(1)
			}
			time.Sleep(20 * time.Microsecond)
			inside.Add(-1)
		}, executor.Needs("odom_state", "imu_state"), executor.Depth(200))
		return nil
	})
	for _, name := range []string{"fusion_a", "fusion_b"} {
		_, err := nodes.Build(context.Background(), r.env, nodes.Spec{Name: name, Type: typ})
		require.NoError(t, err)
	}
	for range 100 {
		_, err := r.bus.Publish(context.Background(), subscribers.Message{Topic: "odom"})
		require.NoError(t, err)
	}
	runToIdle(t, r.ex, 200)
	require.Zero(t, overlaps.Load())
}
