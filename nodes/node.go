package nodes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/nodehooks"
	"github.com/robotexec/robotexec/internal/ratelog"
	"github.com/robotexec/robotexec/internal/regopt"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// Params decodes a node's params; config.Params implements it.
type Params interface {
	// Decode decodes the params strictly into dst, a pointer to a struct:
	// unknown keys are errors, absent keys keep dst's values.
	Decode(dst any) error
}

// Env is what nodes are built in: the executor, the router and the
// defaults of the config.
type Env struct {
	// Executor runs the nodes' callbacks.
	Executor *executor.Executor
	// Router carries their messages: the MQTT client's router when
	// robotexec runs a config, an in-process router in tests and in the
	// dry run that checks a config.
	Router *subscribers.Router
	// Logger is the parent of every node's logger; nil means slog.Default().
	Logger *slog.Logger
	// QoS is the default QoS of subscriptions and publishers.
	QoS byte
	// Depth is the default depth of subscriptions' queues.
	Depth int
	// Overflow is the default overflow policy of subscriptions. nil means
	// by QoS: Block at QoS 1 and 2, so that a message the broker handed
	// over at least once reaches the callback (the client acknowledges it
	// only once the queue took it), and DropOldest at QoS 0, ROS's
	// KEEP_LAST for sensor streams.
	Overflow *subscribers.Policy

	mu     sync.Mutex
	groups map[string]*executor.Group
}

// group returns the shared mutually exclusive group named name.
func (env *Env) group(name string) *executor.Group {
	env.mu.Lock()
	defer env.mu.Unlock()
	if env.groups == nil {
		env.groups = map[string]*executor.Group{}
	}
	g := env.groups[name]
	if g == nil {
		g = env.Executor.NewGroup(name, executor.MutuallyExclusive)
		env.groups[name] = g
	}
	return g
}

// Spec says which node to build.
type Spec struct {
	// Name is the node's unique name, its log and metrics label.
	Name string
	// Type is a registered node type.
	Type string
	// Group, if not empty, names a mutually exclusive callback group shared
	// with the other nodes that name it; it replaces the node's own default
	// group.
	Group string
	// Priority is the priority of the node's callbacks (executor.Priority;
	// a callback's own option overrides it); 0, the default, is the
	// lowest.
	Priority int
	// Params are the node's params; nil means none.
	Params Params
}

// Node is one node: its name, its params and the callbacks it registers.
type Node struct {
	env    *Env
	spec   Spec
	owner  *executor.Owner
	logger *slog.Logger
	decode *ratelog.Limiter

	mu       sync.Mutex
	errs     []error
	shutdown []func()
	pubs     map[pubKey]*subscribers.Publisher
	dyn      dynPublishers       // Publish's, by topic known at run time
	keys     map[callbackKey]int // callbacks made, by kind and name, for nodehooks.Key
	// hooks, when not nil, observe and steer the node for recording and
	// replay (nodehooks.With).
	hooks *nodehooks.Hooks

	handled    atomic.Uint64 // message callbacks returned, with Hooks.Handling
	advertised []string      // with Advertise
}

type pubKey struct {
	topic  string
	qos    byte
	retain bool
}

// ErrUnknownType is returned by Build for a type that is not registered.
var ErrUnknownType = errors.New("nodes: unknown node type")

// BuildError holds every problem met building one node.
type BuildError struct {
	Node, Type string
	Errs       []error
}

// Error names the node and lists its problems.
func (e *BuildError) Error() string {
	return fmt.Sprintf("node %s (%s): %v", e.Node, e.Type, errors.Join(e.Errs...))
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (e *BuildError) Unwrap() []error { return e.Errs }

// Build builds the node spec describes in env: it runs the type's
// constructor, which registers the node's callbacks on env's executor. ctx
// carries robotexec's own hooks (recording and replay) to the node; a
// program passes its own context, or context.Background(). A failure is a
// *BuildError with every problem the constructor met.
func Build(ctx context.Context, env *Env, spec Spec) (*Node, error) {
	t, ok := Lookup(spec.Type)
	if !ok {
		return nil, &BuildError{Node: spec.Name, Type: spec.Type, Errs: []error{
			fmt.Errorf("%w %q (known: %s)", ErrUnknownType, spec.Type, strings.Join(typeNames(), ", ")),
		}}
	}
	logger := env.Logger
	if logger == nil {
		logger = slog.Default()
	}
	n := &Node{
		env:    env,
		spec:   spec,
		logger: logger.With("node", spec.Name),
		decode: ratelog.New(time.Second),
		hooks:  nodehooks.From(ctx),
	}
	var group *executor.Group
	if spec.Group != "" {
		group = env.group(spec.Group)
	}
	n.owner = env.Executor.NewOwner(spec.Name, group)
	err := t.New(n)
	n.mu.Lock()
	defer n.mu.Unlock()
	errs := n.errs
	if err != nil {
		errs = append([]error{err}, errs...)
	}
	if len(errs) > 0 {
		return n, &BuildError{Node: spec.Name, Type: spec.Type, Errs: errs}
	}
	return n, nil
}

// Name returns the node's name.
func (n *Node) Name() string { return n.spec.Name }

// Executor returns the executor that runs the node's callbacks: its
// Callbacks describe them, with their subscriptions' counters.
func (n *Node) Executor() *executor.Executor { return n.env.Executor }

// Spec returns what the node was built from: its name, type, shared
// group and params.
func (n *Node) Spec() Spec { return n.spec }

// Logger returns the node's logger; every line carries node=NAME.
func (n *Node) Logger() *slog.Logger { return n.logger }

// Clock returns the clock of the node's timers.
func (n *Node) Clock() timers.Clock { return n.env.Executor.Clock() }

// Params decodes the node's params into dst, a pointer to a struct with
// yaml tags, strictly: a key dst has no field for is an error, and fields
// whose keys are absent keep their values, so set defaults before calling.
func (n *Node) Params(dst any) error {
	if n.spec.Params == nil {
		return nil
	}
	return n.spec.Params.Decode(dst)
}

// fail records a registration error; it fails the node's construction.
func (n *Node) fail(err error) {
	n.mu.Lock()
	n.errs = append(n.errs, err)
	n.mu.Unlock()
}

func (n *Node) options(opts []executor.Option) regopt.Values[*executor.Group] {
	return regopt.Apply(regopt.Values[*executor.Group]{}, opts)
}

// regOptions returns o with the node's defaults filled in, as the
// executor's options of a registration.
func (n *Node) regOptions(o regopt.Values[*executor.Group]) []executor.Option {
	if o.Depth == 0 {
		o.Depth = n.env.Depth
	}
	if o.Priority == 0 {
		o.Priority = n.spec.Priority
	}
	p := bus.Policy(n.policy(o))
	o.Overflow = &p
	return []executor.Option{func(v *regopt.Values[*executor.Group]) { *v = o }}
}

// policy returns a subscription's overflow policy: its option's, else the
// Env's, else by its QoS (see Env.Overflow).
func (n *Node) policy(o regopt.Values[*executor.Group]) subscribers.Policy {
	switch {
	case o.Overflow != nil:
		return subscribers.Policy(*o.Overflow)
	case n.env.Overflow != nil:
		return *n.env.Overflow
	case n.qos(o) > 0:
		return subscribers.Block
	}
	return subscribers.DropOldest
}

func (n *Node) qos(o regopt.Values[*executor.Group]) byte {
	if o.QoS != nil {
		return *o.QoS
	}
	return n.env.QoS
}

// Subscribe calls cb with every message whose topic matches the MQTT filter
// topic ('+' one level, '#' the rest), one at a time, in arrival order. It
// returns the subscription (for its counters), or nil if it could not be
// made; the error then fails the node.
func (n *Node) Subscribe(topic string, cb func(context.Context, subscribers.Message), opts ...executor.Option) *subscribers.Subscription {
	o := n.options(opts)
	name := o.Name
	if name == "" {
		name = topic // the executor's default
	}
	s, err := n.owner.Subscribe(n.env.Router.QoS(n.qos(o)), topic, n.hookMessages(name, cb), n.regOptions(o)...)
	if err != nil {
		n.fail(err)
		return nil
	}
	return s
}

// Timer calls cb every period, on drift-free deadlines; a call that comes
// more than a period late skips the deadlines that passed and counts them in
// the event. It returns the timer (to cancel or reset it), or nil if it
// could not be made; the error then fails the node.
func (n *Node) Timer(period time.Duration, cb func(context.Context, timers.Event), opts ...executor.Option) *timers.Timer {
	o := n.options(opts)
	name := timerName(o, period)
	var t *timers.Timer
	t, err := n.owner.Timer(period, n.hookTimer(name, &t, cb), n.regOptions(o)...)
	if err != nil {
		n.fail(err)
		return nil
	}
	n.timerMade(name, t, cb)
	return t
}

// OneShot calls cb once, delay from now; Reset on the returned timer arms
// it again.
func (n *Node) OneShot(delay time.Duration, cb func(context.Context, timers.Event), opts ...executor.Option) *timers.Timer {
	o := n.options(opts)
	t, err := n.owner.OneShot(delay, n.hookOneShot(timerName(o, delay), cb), n.regOptions(o)...)
	if err != nil {
		n.fail(err)
		return nil
	}
	return t
}

// NewGroup returns a new callback group of the node, of kind
// executor.MutuallyExclusive or executor.Reentrant. Put callbacks in it
// with executor.InGroup. Of opts, executor.Priority applies: the group's
// callbacks run at least at that priority.
func (n *Node) NewGroup(kind executor.GroupKind, opts ...executor.Option) *executor.Group {
	return n.env.Executor.NewGroup(n.spec.Name, kind, opts...)
}

// OnShutdown registers f to run when robotexec stops, after the executor
// has drained and before the transport closes, so f may still publish.
// Functions run in the reverse order of registration.
func (n *Node) OnShutdown(f func()) {
	n.mu.Lock()
	n.shutdown = append(n.shutdown, f)
	n.mu.Unlock()
}

// Shutdown runs the functions registered with OnShutdown, last first. The
// program that built the node calls it once.
func (n *Node) Shutdown() {
	n.mu.Lock()
	fs := n.shutdown
	n.shutdown = nil
	n.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
