package nodetest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/nodehooks"
	"github.com/robotexec/robotexec/internal/syncbuf"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// epoch is where a Rig's clock starts.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Rig runs nodes on a simulated clock and an in-process router. Its
// methods are for the test's goroutine (see the package doc).
type Rig struct {
	t     testing.TB
	clock *timers.Sim
	ex    *executor.Executor
	bus   *subscribers.Router
	env   *nodes.Env
	ctx   context.Context // carries the hooks that record the publications
	logs  syncbuf.Buffer

	mu   sync.Mutex
	pubs []publication // the nodes' publications, in order
}

// Option changes the Env a Rig builds its nodes in. Depth and
// Overflow set the defaults a config's executor section sets.
type Option func(*nodes.Env)

// Depth sets the default depth of the nodes' subscription queues,
// as executor.queue_depth does (default: 10).
func Depth(n int) Option { return func(env *nodes.Env) { env.Depth = n } }

// Overflow sets what the nodes' full subscription queues do, as
// executor.overflow does (default: by QoS, and the rig's QoS is 1, so
// subscribers.Block).
func Overflow(p subscribers.Policy) Option {
	return func(env *nodes.Env) { env.Overflow = &p }
}

// New returns a rig whose clock reads 2026-01-01 00:00:00 UTC, with a
// config's defaults (mqtt.qos 1, executor.queue_depth 10) unless opts set
// others. It reports its failures (a publication or a payload that fails,
// a params string that is not YAML) to t, which may be nil outside a test,
// in an Example: a failure then panics.
func New(t testing.TB, opts ...Option) *Rig {
	r := &Rig{t: t, clock: timers.NewSim(epoch), bus: new(subscribers.Router)}
	// The time of a log record is the wall clock's: left out, so that
	// the logs are the same on every run.
	logger := slog.New(slog.NewTextHandler(&r.logs, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
	r.ex = executor.New(executor.Options{Workers: 1, Clock: r.clock, Logger: logger})
	r.env = &nodes.Env{Executor: r.ex, Router: r.bus, Logger: logger,
		QoS: config.DefaultQoS, Depth: subscribers.DefaultDepth}
	r.ctx = nodehooks.With(context.Background(), &nodehooks.Hooks{Published: r.record})
	for _, o := range opts {
		o(r.env)
	}
	return r
}

// Build builds node name of type typ with params, a YAML mapping such as
// "{ topic: hb, period: 100ms }", as a config's nodes list gives them;
// "" means none. Its error is nodes.Build's: a *nodes.BuildError naming
// the node and every problem its constructor met.
func (r *Rig) Build(name, typ, params string) (*nodes.Node, error) {
	r.helper()
	var b strings.Builder
	b.WriteString("nodes:\n  - name: n\n    type: t\n    params:\n")
	for _, line := range strings.Split(params, "\n") {
		b.WriteString("      " + line + "\n")
	}
	cfg, err := config.Parse("nodetest.yaml", []byte(b.String()), nil)
	if err != nil {
		r.fatalf("nodetest: params %q: %v", params, err)
		return nil, err
	}
	return nodes.Build(r.ctx, r.env, nodes.Spec{Name: name, Type: typ, Params: cfg.Nodes[0].Params})
}

// MustBuild is Build for a node that must build: an error fails the test.
func (r *Rig) MustBuild(name, typ, params string) *nodes.Node {
	r.helper()
	n, err := r.Build(name, typ, params)
	if err != nil {
		r.fatalf("nodetest: %v", err)
	}
	return n
}

// Publish publishes payloads on topic, in order, as another process
// would, then runs the callbacks that are ready. The payloads are queued
// before any callback runs: a subscription with the block policy must
// have room for all of them (see Depth), or Publish waits forever.
func (r *Rig) Publish(topic string, payloads ...string) {
	r.helper()
	p, err := r.bus.Publisher(topic)
	if err != nil {
		r.fatalf("nodetest: publish on %q: %v", topic, err)
		return
	}
	for _, payload := range payloads {
		if err := p.Publish(context.Background(), []byte(payload)); err != nil {
			r.fatalf("nodetest: publish on %q: %v", topic, err)
		}
	}
	r.ex.SpinAll()
}

// Advance advances the clock by d, then runs the callbacks that are
// ready: the timers that fell due, each once however many deadlines it
// missed, and what they set off.
func (r *Rig) Advance(d time.Duration) {
	r.clock.Advance(d)
	r.ex.SpinAll()
}

// Rewind sets the clock back to t, as the clock topic does under
// use_sim_time when a playback starts over, then runs the callbacks that
// are ready. The timers re-arm on the new time as they do in robotexec
// run (docs/recording.md, Simulated time).
func (r *Rig) Rewind(t time.Time) {
	r.clock.Rewind(t)
	r.ex.SpinAll()
}

// Now returns the time of the rig's clock.
func (r *Rig) Now() time.Time { return r.clock.Now() }

// Logs returns what the nodes logged so far, in slog's text format
// without the time: level=INFO msg=... node=NAME and the attributes.
func (r *Rig) Logs() string { return r.logs.String() }

func (r *Rig) helper() {
	if r.t != nil {
		r.t.Helper()
	}
}

// fatalf fails the test, or panics without one.
func (r *Rig) fatalf(format string, args ...any) {
	if r.t == nil {
		panic(fmt.Sprintf(format, args...))
	}
	r.t.Helper()
	r.t.Fatalf(format, args...)
}
