package executor

import (
	"context"
	"fmt"
	"time"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/facade"
	"github.com/robotexec/robotexec/internal/regopt"
	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
	"github.com/robotexec/robotexec/waitset"
)

// Owner registers callbacks on an executor on behalf of one node. Every
// callback registered without a group joins the owner's default group,
// which is mutually exclusive unless given otherwise: the callbacks of one
// node never overlap unless it asks for it, as in rclcpp.
type Owner struct {
	ex    *Executor
	name  string
	group *Group
}

// NewOwner returns an owner named name (the node's name, used in logs,
// traces and metrics). group is its default group; nil gives it a mutually
// exclusive group of its own.
func (e *Executor) NewOwner(name string, group *Group) *Owner {
	if group == nil {
		group = e.NewGroup(name, MutuallyExclusive)
	}
	return &Owner{ex: e, name: name, group: group}
}

// Name returns the owner's name.
func (o *Owner) Name() string { return o.name }

// DefaultGroup returns the group of callbacks registered without InGroup.
func (o *Owner) DefaultGroup() *Group { return o.group }

// Executor returns the executor the owner registers on.
func (o *Owner) Executor() *Executor { return o.ex }

// Option adjusts one registration: a callback's group, name, queue and
// resources. It is also package nodes' Option: the executor's options
// apply to nodes' callbacks, and nodes.QoS and nodes.Retain, which only
// nodes read, are ignored here.
type Option func(*regopt.Values[*Group])

// regOptions are a registration's options, resolved.
type regOptions struct {
	group     *Group
	name      string
	priority  int
	queue     bus.Options
	resources []*resource
	made      func(*bus.Subscription)
}

// InGroup puts the callback in group g instead of its owner's default
// group; InGroup(nil) leaves it in the default group.
func InGroup(g *Group) Option { return func(o *regopt.Values[*Group]) { o.Group = g } }

// Name names the callback in logs, traces and metrics. The default is
// "timer" plus the period for a timer, and the topic filter for a
// subscription.
func Name(name string) Option { return func(o *regopt.Values[*Group]) { o.Name = name } }

// Depth sets a subscription's queue depth (default subscribers.DefaultDepth).
func Depth(n int) Option { return func(o *regopt.Values[*Group]) { o.Depth = n } }

// Overflow sets a subscription's overflow policy (default
// subscribers.DropOldest).
func Overflow(p subscribers.Policy) Option {
	return func(o *regopt.Values[*Group]) { o.Overflow = (*bus.Policy)(&p) }
}

// Made calls f with a subscription once it is made, before it is attached
// to its source, and so before its callback can run: a callback that
// needs its own subscription gets it without waiting. Each Made of a
// registration is called, in order.
func Made(f func(*subscribers.Subscription)) Option {
	return func(o *regopt.Values[*Group]) {
		made := func(s *bus.Subscription) { f(facade.PublicSub(s)) }
		if prev := o.Made; prev != nil {
			o.Made = func(s *bus.Subscription) { prev(s); made(s) }
			return
		}
		o.Made = made
	}
}

// Priority sets the callback's priority, or, given to NewGroup, the
// group's: a callback runs at the higher of its own and its group's. Among
// the subscriptions ready to run, the executor serves those of the highest
// priority first, after the timers that are due (timers run first
// whatever their priority), and the others in the order they became
// ready; the default, 0, is the lowest. No callback starves: while
// subscriptions wait, at least one of every 17 subscription runs the
// executor starts goes to the one that has waited longest (docs/design.md,
// Priorities). A negative priority is an error.
func Priority(p int) Option { return func(o *regopt.Values[*Group]) { o.Priority = p } }

// Needs makes the callback run only while it holds every resource named,
// exclusively (Executor.Resource makes a resource on first use):
// callbacks that need a common resource never overlap, and each resource
// serves its callbacks in the order they became ready.
func Needs(resources ...string) Option {
	return func(o *regopt.Values[*Group]) { o.Needs = append(o.Needs, resources...) }
}

func (o *Owner) options(opts []Option) regOptions {
	v := regopt.Apply(regopt.Values[*Group]{}, opts)
	r := regOptions{group: o.group, name: v.Name, made: v.Made, priority: v.Priority}
	if v.Group != nil {
		r.group = v.Group
	}
	if r.priority >= 0 && r.group != nil {
		r.priority = max(r.priority, r.group.priority)
	}
	r.queue.Depth = v.Depth
	if v.Overflow != nil {
		r.queue.Overflow = *v.Overflow
	}
	for _, name := range v.Needs {
		r.resources = append(r.resources, o.ex.resource(name))
	}
	return r
}

// Timer registers a periodic timer that calls cb every period, on
// drift-free deadlines starting one period from now. Each call gets its
// run's context (see the package documentation).
func (o *Owner) Timer(period time.Duration, cb func(context.Context, timers.Event), opts ...Option) (*timers.Timer, error) {
	return o.addTimer(period, false, cb, opts)
}

// OneShot registers a timer that calls cb once, delay from now. Reset
// arms it again.
func (o *Owner) OneShot(delay time.Duration, cb func(context.Context, timers.Event), opts ...Option) (*timers.Timer, error) {
	return o.addTimer(delay, true, cb, opts)
}

func (o *Owner) addTimer(period time.Duration, oneShot bool, cb func(context.Context, timers.Event), opts []Option) (*timers.Timer, error) {
	if cb == nil {
		return nil, fmt.Errorf("executor: %s: timer callback is nil", o.name)
	}
	r := o.options(opts)
	if r.name == "" {
		r.name = "timer(" + period.String() + ")"
	}
	if r.priority < 0 {
		return nil, fmt.Errorf("executor: %s: priority %d is negative", o.name, r.priority)
	}
	e := o.ex
	e.regMu.Lock()
	defer e.regMu.Unlock()
	if e.state.Load() >= stateClosing {
		return nil, ErrClosed
	}
	t, err := e.timers.NewTimer(period, oneShot)
	if err != nil {
		if err == timerq.ErrStopped {
			return nil, ErrClosed
		}
		return nil, fmt.Errorf("executor: %s: %w", o.name, err)
	}
	en := &entity{owner: o, name: r.name, group: serializing(r.group), timer: t, onTimer: cb, acq: newAcquisition(r.resources)}
	if en.acq != nil {
		en.acq.x = timerq.Entity(t)
	}
	timerq.Entity(t).Data = en
	e.entities = append(e.entities, en)
	t.Reset()
	return facade.PublicTimer(t), nil
}

// Subscribe registers cb for the messages of src whose topic matches
// filter. The subscription has its own queue (Depth, Overflow options); cb
// runs once per message, in arrival order, never overlapping itself, with
// its run's context.
func (o *Owner) Subscribe(src subscribers.Source, filter string, cb func(context.Context, subscribers.Message), opts ...Option) (*subscribers.Subscription, error) {
	if cb == nil {
		return nil, fmt.Errorf("executor: %s: subscription callback is nil", o.name)
	}
	r := o.options(opts)
	if r.name == "" {
		r.name = filter
	}
	if r.priority < 0 {
		return nil, fmt.Errorf("executor: %s: priority %d is negative", o.name, r.priority)
	}
	s, err := bus.New(filter, r.queue)
	if err != nil {
		return nil, fmt.Errorf("executor: %s: %w", o.name, err)
	}
	e := o.ex
	en := &entity{owner: o, name: r.name, group: serializing(r.group), sub: s, onMsg: cb, acq: newAcquisition(r.resources),
		priority: r.priority}
	if en.acq != nil {
		en.acq.x = bus.Entity(s)
	}
	bus.Entity(s).Data = en
	bus.Entity(s).SetUrgent(r.priority > 0)
	if r.made != nil {
		r.made(s)
	}
	e.regMu.Lock()
	if e.state.Load() >= stateClosing {
		e.regMu.Unlock()
		return nil, ErrClosed
	}
	e.set.Register(bus.Entity(s), waitset.Subscription)
	e.entities = append(e.entities, en)
	e.regMu.Unlock()
	// Attaching may wait for the network (an MQTT SUBACK); it happens
	// outside the lock so that other registrations and a stop go on.
	pub := facade.PublicSub(s)
	if err := src.Attach(pub); err != nil {
		e.forget(en)
		s.Close()
		return nil, fmt.Errorf("executor: %s: subscribe %q: %w", o.name, filter, err)
	}
	if s.Closed() {
		// The executor stopped while attaching: Close found no source to
		// detach from yet.
		src.Detach(pub)
		return nil, ErrClosed
	}
	return pub, nil
}

// forget removes en from the executor's entities.
func (e *Executor) forget(en *entity) {
	e.regMu.Lock()
	defer e.regMu.Unlock()
	for i, x := range e.entities {
		if x == en {
			e.entities = append(e.entities[:i], e.entities[i+1:]...)
			return
		}
	}
}

// serializing returns g if its callbacks must be serialized.
func serializing(g *Group) *Group {
	if g == nil || g.kind == Reentrant {
		return nil
	}
	return g
}
