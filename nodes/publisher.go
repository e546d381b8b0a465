package nodes

import (
	"context"
	"fmt"
	"slices"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/facade"
	"github.com/robotexec/robotexec/subscribers"
)

// Publisher returns a publisher on topic (a topic name, no wildcards) with
// the node's default QoS, or QoS and Retain options: it publishes to the
// matching subscriptions of this process directly and to the broker for
// everyone else (see [subscribers.Publisher] for what a publication under
// a callback's context does). The same topic and options give the same
// publisher. A bad topic fails the node's construction, and the
// publisher's publications return the error.
func (n *Node) Publisher(topic string, opts ...executor.Option) *subscribers.Publisher {
	key := n.pubKey(topic, opts)
	n.mu.Lock()
	if p := n.pubs[key]; p != nil {
		n.mu.Unlock()
		return p
	}
	n.mu.Unlock()
	p, err := n.newPublisher(key)
	if err != nil {
		n.fail(err)
		return p
	}
	n.mu.Lock()
	if n.pubs == nil {
		n.pubs = map[pubKey]*subscribers.Publisher{}
	}
	if q := n.pubs[key]; q != nil {
		p = q // made twice at once: keep the first
	} else {
		n.pubs[key] = p
	}
	n.mu.Unlock()
	return p
}

func (n *Node) pubKey(topic string, opts []executor.Option) pubKey {
	o := n.options(opts)
	return pubKey{topic: topic, qos: n.qos(o), retain: o.Retain}
}

// newPublisher makes a publisher of the node; one that cannot publish
// returns the error, which it also returns.
func (n *Node) newPublisher(key pubKey) (*subscribers.Publisher, error) {
	popts := []bus.PublishOption{bus.WithQoS(key.qos), bus.WithBefore(func(_ context.Context, payload []byte) {
		n.published(key.topic, payload)
	})}
	if key.retain {
		popts = append(popts, bus.WithRetain())
	}
	p, err := facade.Router(n.env.Router).Publisher(key.topic, popts...)
	if err != nil {
		err = fmt.Errorf("publisher %q: %w", key.topic, err)
		p = bus.Failed(key.topic, err)
	}
	return facade.PublicPublisher(p), err
}

// Publish publishes payload on topic, for topics known only at run time
// (a bridge's mapped topics). The publishers of the last 1,024
// topics are kept, so repeated topics cost no lookup, and a flood of
// distinct topics costs no memory. A bad topic is an error of this
// publication only.
func (n *Node) Publish(ctx context.Context, topic string, payload []byte, opts ...executor.Option) error {
	key := n.pubKey(topic, opts)
	n.mu.Lock()
	p := n.pubs[key]
	if p == nil {
		p = n.dyn.get(key)
	}
	n.mu.Unlock()
	if p == nil {
		p, _ = n.newPublisher(key)
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
