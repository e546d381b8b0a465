package refsys

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// input is a fusion's or a cyclic node's cache of one input: its latest
// message, until the node uses it, and the sequence number of the one
// before, for the missed samples.
type input struct {
	cached *Message
	last   uint32
}

// use merges the cached message into out, clears the cache, and returns
// the samples of the input missed before it.
func (in *input) use(out *Message) uint32 {
	n := missed(in.cached, &in.last)
	out.Merge(in.cached)
	in.cached = nil
	return n
}

// cache subscribes to topic, keeping its latest message in in and
// calling then, if not nil, after each.
func cache(n *nodes.Node, topic string, in *input, then func(ctx context.Context, at uint64)) {
	n.Subscribe(topic, func(ctx context.Context, m subscribers.Message) {
		at := stamp(n)
		msg, ok := decode(n, m)
		if !ok {
			return
		}
		in.cached = msg
		if then != nil {
			then(ctx, at)
		}
	}, keepLast(depthNode)...)
}

// FusionParams are the params of a fusion.
type FusionParams struct {
	Inputs []string `yaml:"inputs"` // exactly two
	Output string   `yaml:"output"` // default: the node's name
	Crunch uint64   `yaml:"crunch"` // Crunch's limit; default DefaultCrunch
}

// NewFusion builds a fusion: each input only fills its cache, until both
// hold a message; then the callback that filled the second crunches,
// publishes both histories with its own entry (stamped at its start)
// and clears both caches. Its callbacks share the node's mutually
// exclusive group, so the caches need no lock.
func NewFusion(n *nodes.Node) error {
	p := FusionParams{Output: n.Name(), Crunch: DefaultCrunch}
	if err := n.Params(&p); err != nil {
		return err
	}
	if len(p.Inputs) != 2 || p.Inputs[0] == "" || p.Inputs[1] == "" {
		return fmt.Errorf("inputs: want two topics, not %q", p.Inputs)
	}
	out := n.Publisher(p.Output)
	var ins [2]input
	var seq uint32
	fuse := func(ctx context.Context, at uint64) {
		if ins[0].cached == nil || ins[1].cached == nil {
			return
		}
		result := Crunch(p.Crunch)
		var msg Message
		dropped := ins[0].use(&msg) + ins[1].use(&msg)
		msg.Add(n.Name(), seq, dropped, at)
		seq++
		msg.Data[0] = result
		publish(ctx, n, out, &msg)
	}
	for i, topic := range p.Inputs {
		cache(n, topic, &ins[i], fuse)
	}
	return nil
}

// CyclicParams are the params of a cyclic node.
type CyclicParams struct {
	Inputs []string      `yaml:"inputs"` // any number
	Output string        `yaml:"output"` // default: the node's name
	Period time.Duration `yaml:"period"` // required
	Crunch uint64        `yaml:"crunch"` // Crunch's limit; default DefaultCrunch
}

// NewCyclic builds a cyclic node: its inputs only fill their caches;
// every period it crunches and publishes what is cached, merged, with its
// own entry, and clears the caches; it publishes also when nothing was
// cached. Its callbacks share the node's mutually exclusive group.
func NewCyclic(n *nodes.Node) error {
	p := CyclicParams{Output: n.Name(), Crunch: DefaultCrunch}
	if err := n.Params(&p); err != nil {
		return err
	}
	if p.Period <= 0 {
		return errors.New("period is required and must be positive")
	}
	for i, topic := range p.Inputs {
		if topic == "" {
			return fmt.Errorf("inputs[%d]: empty topic", i)
		}
	}
	out := n.Publisher(p.Output)
	ins := make([]input, len(p.Inputs))
	for i, topic := range p.Inputs {
		cache(n, topic, &ins[i], nil)
	}
	var seq uint32
	n.Timer(p.Period, func(ctx context.Context, _ timers.Event) {
		at := stamp(n)
		result := Crunch(p.Crunch)
		var msg Message
		var dropped uint32
		for i := range ins {
			if ins[i].cached != nil {
				dropped += ins[i].use(&msg)
			}
		}
		msg.Add(n.Name(), seq, dropped, at)
		seq++
		msg.Data[0] = result
		publish(ctx, n, out, &msg)
	})
	return nil
}
