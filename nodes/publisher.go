package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/robotexec/robotexec/subscribers"
)

// Publisher publishes on one topic for a node: to the matching
// subscriptions of this process directly and to the broker for everyone
// else (see [subscribers.Router]). Under a callback's context, a message
// into a full local subscription with the block policy mutes that
// callback after its run until the queue drains, and one to an idle local
// subscription may run next on the same worker. Under any other context
// (a goroutine's own), a message into a full block queue waits for room
// until the context is done.
type Publisher struct {
	n     *Node
	topic string
	pub   *subscribers.Publisher
	err   error
}

// Publisher returns a publisher on topic (a topic name, no wildcards) with
// the node's default QoS, or QoS and Retain options. A bad topic fails the
// node's construction, and the publisher's Publish returns the error.
func (n *Node) Publisher(topic string, opts ...Option) *Publisher {
	key := n.pubKey(topic, opts)
	n.mu.Lock()
	if p := n.pubs[key]; p != nil {
		n.mu.Unlock()
		return p
	}
	n.mu.Unlock()
	p := n.newPublisher(key)
	if p.err != nil {
		n.fail(p.err)
		return p
	}
	n.mu.Lock()
	if n.pubs == nil {
		n.pubs = map[pubKey]*Publisher{}
	}
	n.pubs[key] = p
	n.mu.Unlock()
	return p
}

func (n *Node) pubKey(topic string, opts []Option) pubKey {
	o := n.options(opts)
	return pubKey{topic: topic, qos: n.qos(o), retain: o.Retain}
}

// newPublisher makes a publisher; its err says why it cannot publish.
func (n *Node) newPublisher(key pubKey) *Publisher {
	p := &Publisher{n: n, topic: key.topic}
	popts := []subscribers.PublishOption{subscribers.WithQoS(key.qos)}
	if key.retain {
		popts = append(popts, subscribers.WithRetain())
	}
	p.pub, p.err = n.env.Router.Publisher(key.topic, popts...)
	if p.err != nil {
		p.err = fmt.Errorf("publisher %q: %w", key.topic, p.err)
	}
	return p
}

// Topic returns the publisher's topic.
func (p *Publisher) Topic() string { return p.topic }

// Publish publishes payload under ctx; the payload must not be modified
// afterwards. It never waits for the network. It fails when the broker
// connection cannot take the message (see docs/mqtt.md); subscriptions of
// this process have it then all the same. A ctx that is done (a finished
// run's) refuses the message with its error.
func (p *Publisher) Publish(ctx context.Context, payload []byte) error {
	if p.err != nil {
		return p.err
	}
	p.n.published(ctx, p.topic, payload)
	return p.pub.Publish(ctx, payload)
}

// PublishJSON publishes v encoded with encoding/json.
func (p *Publisher) PublishJSON(ctx context.Context, v any) error {
	if p.err != nil {
		return p.err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("publisher %q: %w", p.topic, err)
	}
	return p.Publish(ctx, b)
}

// Publish publishes payload on topic, for topics known only at run time
// (a bridge's mapped topics). The publishers of the last DynPublishers
// topics are kept, so repeated topics cost no lookup, and a flood of
// distinct topics costs no memory. A bad topic is an error of this
// publication only.
func (n *Node) Publish(ctx context.Context, topic string, payload []byte, opts ...Option) error {
	key := n.pubKey(topic, opts)
	n.mu.Lock()
	p := n.pubs[key]
	if p == nil {
		p = n.dyn.get(key)
	}
	n.mu.Unlock()
	if p == nil {
		p = n.newPublisher(key)
		n.mu.Lock()
		n.dyn.add(key, p)
		n.mu.Unlock()
	}
	return p.Publish(ctx, payload)
}

// Advertise declares that the node publishes on topic, a topic name or a
// filter for topics known only at run time (a bridge's mapped topics),
// beside its Publishers: the instance's graph topic lists it.
func (n *Node) Advertise(topic string) {
	n.mu.Lock()
	n.advertised = append(n.advertised, topic)
	n.mu.Unlock()
}

// Publications returns the topics of the node's Publishers and what it
// advertised, sorted, without the topics known only from Publish.
func (n *Node) Publications() []string {
	n.mu.Lock()
	out := slices.Clone(n.advertised)
	for k := range n.pubs {
		out = append(out, k.topic)
	}
	n.mu.Unlock()
	slices.Sort(out)
	return slices.Compact(out)
}
