package refsys

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// The node types, one per node kind of the original.
const (
	TypeSensor       = "reference_sensor"
	TypeTransform    = "reference_transform"
	TypeFusion       = "reference_fusion"
	TypeCyclic       = "reference_cyclic"
	TypeIntersection = "reference_intersection"
	TypeCommand      = "reference_command"
)

// registered makes Register's work happen once.
var registered sync.Once

// Register registers the node types with package nodes, once: a second
// call does nothing. A binary that runs the reference system calls it
// before robotexec.Main; it is not done in an init function, so that
// importing the package (robotexec bench does, for its reference group)
// adds no node types to a binary that does not ask for them.
func Register() {
	registered.Do(func() {
		nodes.Register(TypeSensor, "reference system: publishes a fresh sample every period", NewSensor)
		nodes.Register(TypeTransform, "reference system: crunches each input and passes it on", NewTransform)
		nodes.Register(TypeFusion, "reference system: crunches and fuses when both inputs have a sample", NewFusion)
		nodes.Register(TypeCyclic, "reference system: crunches and merges the latest inputs every period", NewCyclic)
		nodes.Register(TypeIntersection, "reference system: independent transforms, each in its own group", NewIntersection)
		nodes.Register(TypeCommand, "reference system: logs the latency, hot path and planner KPIs", NewCommand)
	})
}

// Queue depths of the original's subscriptions (keep-last QoS): the
// latest sample is all a node wants, the command nodes keep a few.
const (
	depthNode    = 1
	depthCommand = 10
)

// keepLast returns the options of a keep-last subscription of depth n:
// a full queue drops its oldest message for the new one.
func keepLast(n int) []executor.Option {
	return []executor.Option{executor.Depth(n), executor.Overflow(subscribers.DropOldest)}
}

// stamp returns the node's clock's time in nanoseconds since the Unix
// epoch: the wall clock under robotexec run, simulated in nodetest.
func stamp(n *nodes.Node) uint64 { return uint64(n.Clock().Now().UnixNano()) }

// decode reads the message of m, or logs why it cannot and returns false.
func decode(n *nodes.Node, m subscribers.Message) (*Message, bool) {
	var msg Message
	if err := msg.UnmarshalBinary(m.Payload); err != nil {
		n.Logger().Warn("not a reference system message", "topic", m.Topic, "err", err)
		return nil, false
	}
	return &msg, true
}

// publish sends m on p, or logs why it could not.
func publish(ctx context.Context, n *nodes.Node, p *subscribers.Publisher, m *Message) {
	b, _ := m.MarshalBinary()
	if err := p.Publish(ctx, b); err != nil {
		n.Logger().Warn("publish failed", "topic", p.Topic(), "err", err)
	}
}

// SensorParams are the params of a sensor.
type SensorParams struct {
	Topic  string        `yaml:"topic"`  // where to publish; default: the node's name
	Period time.Duration `yaml:"period"` // required
}

// NewSensor builds a sensor: every period it publishes a message whose
// history holds only its own entry.
func NewSensor(n *nodes.Node) error {
	p := SensorParams{Topic: n.Name()}
	if err := n.Params(&p); err != nil {
		return err
	}
	if p.Period <= 0 {
		return errors.New("period is required and must be positive")
	}
	out := n.Publisher(p.Topic)
	var seq uint32
	n.Timer(p.Period, func(ctx context.Context, _ timers.Event) {
		var m Message
		m.Add(n.Name(), seq, 0, stamp(n))
		seq++
		publish(ctx, n, out, &m)
	})
	return nil
}

// TransformParams are the params of a transform.
type TransformParams struct {
	Input  string `yaml:"input"`  // required
	Output string `yaml:"output"` // default: the node's name
	Crunch uint64 `yaml:"crunch"` // Crunch's limit; default DefaultCrunch
}

// NewTransform builds a transform: for each input message it stamps the
// callback's start, crunches, and publishes the input's history with its
// own entry added, counting the input's missed samples.
func NewTransform(n *nodes.Node) error {
	p := TransformParams{Output: n.Name(), Crunch: DefaultCrunch}
	if err := n.Params(&p); err != nil {
		return err
	}
	if p.Input == "" {
		return errors.New("input is required")
	}
	pass(n, p.Input, p.Output, p.Crunch, keepLast(depthNode)...)
	return nil
}

// pass subscribes a transform from input to output.
func pass(n *nodes.Node, input, output string, crunch uint64, opts ...executor.Option) {
	out := n.Publisher(output)
	var seq, last uint32
	n.Subscribe(input, func(ctx context.Context, m subscribers.Message) {
		at := stamp(n)
		in, ok := decode(n, m)
		if !ok {
			return
		}
		result := Crunch(crunch)
		var msg Message
		msg.Merge(in)
		msg.Add(n.Name(), seq, missed(in, &last), at)
		seq++
		msg.Data[0] = result
		publish(ctx, n, out, &msg)
	}, opts...)
}

// Connection is one of an intersection's transforms.
type Connection struct {
	Input  string  `yaml:"input"`  // required
	Output string  `yaml:"output"` // required
	Crunch *uint64 `yaml:"crunch"` // Crunch's limit; default: the node's
	// Priority is the priority of the connection's callback
	// (executor.Priority); default 0: the node's.
	Priority int `yaml:"priority"`
}

// IntersectionParams are the params of an intersection.
type IntersectionParams struct {
	Connections []Connection `yaml:"connections"` // at least one
	Crunch      uint64       `yaml:"crunch"`      // the connections' default crunch limit; default DefaultCrunch
}

// NewIntersection builds an intersection: a transform per connection,
// each in a mutually exclusive group of its own, so that they run in
// parallel and none waits for another; each stamps its entry with the
// node's name. A connection's priority, where set, is its callback's: a
// connection on a hot path can be served first without the others (a
// node's priority is every connection's).
func NewIntersection(n *nodes.Node) error {
	p := IntersectionParams{Crunch: DefaultCrunch}
	if err := n.Params(&p); err != nil {
		return err
	}
	if len(p.Connections) == 0 {
		return errors.New("connections: at least one is required")
	}
	for i, c := range p.Connections {
		if c.Input == "" || c.Output == "" {
			return fmt.Errorf("connections[%d]: input and output are required", i)
		}
		if c.Priority < 0 {
			return fmt.Errorf("connections[%d]: priority %d is negative", i, c.Priority)
		}
	}
	for _, c := range p.Connections {
		crunch := p.Crunch
		if c.Crunch != nil {
			crunch = *c.Crunch
		}
		opts := append(keepLast(depthNode), executor.InGroup(n.NewGroup(executor.MutuallyExclusive)))
		if c.Priority > 0 {
			opts = append(opts, executor.Priority(c.Priority))
		}
		pass(n, c.Input, c.Output, crunch, opts...)
	}
	return nil
}
