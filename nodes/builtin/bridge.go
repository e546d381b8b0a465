package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/nodehooks"
	"github.com/robotexec/robotexec/internal/ratelog"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

func init() {
	nodes.Register("bridge", "republishes a topic filter to a topic template (wildcards mapped in order), with max_rate and json checks", newBridge)
	nodehooks.MarkShort("bridge")
}

// bridgeParams are the params of a bridge node.
type bridgeParams struct {
	// From is the MQTT topic filter to read; a shared subscription,
	// $share/GROUP/FILTER, splits FILTER's messages with the other
	// members of GROUP (other instances, say).
	From string `yaml:"from"`
	// To is the topic template to publish to: each '+' or '#' in it is
	// replaced, in order, by what the same wildcard matched in From (in
	// FILTER, for a shared subscription).
	To string `yaml:"to"`
	// QoS of the publications (optional); defaults to mqtt.qos.
	QoS *int `yaml:"qos"`
	// Retain the publications (optional); defaults to false.
	Retain bool `yaml:"retain"`
	// MaxRate, in Hz per source topic (optional); 0 means no limit. A
	// message that comes sooner than 1/MaxRate after the last one forwarded
	// from its topic is dropped and counted.
	MaxRate float64 `yaml:"max_rate"`
	// JSON drops and counts payloads that are not valid JSON (optional).
	JSON bool `yaml:"json"`
	// MaxTopics bounds the source topics whose last forwarding MaxRate
	// remembers (optional); defaults to defaultMaxTopics. Past it, the
	// least recently seen topic is forgotten, counted as a drop with
	// reason evicted, and its next message is forwarded.
	MaxTopics int `yaml:"max_topics"`
}

// newBridge builds a bridge node.
func newBridge(n *nodes.Node) error {
	var p bridgeParams
	if err := n.Params(&p); err != nil {
		return err
	}
	mapper, err := newTopicMap(p.From, p.To)
	if err != nil {
		return err
	}
	n.Advertise(p.To)
	gate, err := p.rateGate(n.Clock())
	if err != nil {
		return err
	}
	opts, err := p.publishOptions()
	if err != nil {
		return err
	}
	warn := ratelog.New(10 * time.Second) // a broker outage must not flood the log
	n.SubscribeSelf(p.From, func(ctx context.Context, sub *subscribers.Subscription, m subscribers.Message) {
		if p.JSON && !json.Valid(m.Payload) {
			sub.Drop(subscribers.Invalid)
			return
		}
		if !gate.allow(sub, m) {
			return
		}
		to, ok := mapper.apply(m.Topic)
		if !ok {
			// The router delivers only topics that From matches.
			sub.Drop(subscribers.Invalid)
			return
		}
		if err := n.Publish(ctx, to, m.Payload, opts...); err != nil {
			warn.Log(n.Logger(), slog.LevelWarn, "bridge: publish failed", "topic", to, "err", err)
		}
	}, executor.Name("bridge"))
	return nil
}

// publishOptions returns the options of the bridge's publications: its
// qos and retain params.
func (p *bridgeParams) publishOptions() ([]executor.Option, error) {
	var opts []executor.Option
	if p.QoS != nil {
		if *p.QoS < 0 || *p.QoS > 2 {
			return nil, fmt.Errorf("qos %d is not 0, 1 or 2", *p.QoS)
		}
		opts = append(opts, nodes.QoS(byte(*p.QoS)))
	}
	if p.Retain {
		opts = append(opts, nodes.Retain())
	}
	return opts, nil
}

// rateGate is a bridge's max_rate: the arrival of the last message
// forwarded from each source topic, for up to max_topics topics.
type rateGate struct {
	interval time.Duration // 0: no limit
	last     *topicTable[time.Time]
	clock    timers.Clock
}

// rateGate returns the gate of the max_rate and max_topics params.
func (p *bridgeParams) rateGate(clock timers.Clock) (*rateGate, error) {
	if p.MaxRate < 0 {
		return nil, fmt.Errorf("max_rate %v is negative", p.MaxRate)
	}
	maxTopics, err := checkMaxTopics(p.MaxTopics)
	if err != nil {
		return nil, err
	}
	g := &rateGate{last: newTopicTable[time.Time](maxTopics), clock: clock}
	if p.MaxRate > 0 {
		g.interval = time.Duration(float64(time.Second) / p.MaxRate)
	}
	return g, nil
}

// allow reports whether m may be forwarded: it came at least the interval
// after the last message forwarded from its topic. It counts on sub the
// messages it refuses (rate_limited) and the topics it forgets for a new
// one (evicted).
func (g *rateGate) allow(sub *subscribers.Subscription, m subscribers.Message) bool {
	if g.interval == 0 {
		return true
	}
	at := m.Received
	if at.IsZero() {
		at = g.clock.Now()
	}
	switch prev := g.last.get(m.Topic); {
	case prev == nil:
		if g.last.add(m.Topic, at) {
			sub.Drop(subscribers.Evicted)
		}
	case at.Sub(*prev) < g.interval:
		sub.Drop(subscribers.RateLimited)
		return false
	default:
		*prev = at
	}
	return true
}

// topicMap maps topics matched by a filter onto a template.
type topicMap struct {
	from []string
	to   []string
}

func newTopicMap(from, to string) (*topicMap, error) {
	if from == "" {
		return nil, fmt.Errorf("from is required")
	}
	if to == "" {
		return nil, fmt.Errorf("to is required")
	}
	route, err := bus.RouteFilter(from)
	if err != nil {
		return nil, err
	}
	if err := subscribers.ValidateFilter(to); err != nil {
		return nil, err
	}
	if bus.Shared(to) {
		return nil, fmt.Errorf("to %q: a topic template is no shared subscription", to)
	}
	if bus.Overlap(route, to) {
		return nil, fmt.Errorf("to %q can match from %q: the bridge would forward its own output, again and again", to, from)
	}
	m := &topicMap{from: strings.Split(route, "/"), to: strings.Split(to, "/")}
	if have, need := wildcards(m.from), wildcards(m.to); need > have {
		return nil, fmt.Errorf("to %q has %d wildcards, from %q only %d", to, need, from, have)
	}
	return m, nil
}

func wildcards(levels []string) int {
	n := 0
	for _, l := range levels {
		if l == "+" || l == "#" {
			n++
		}
	}
	return n
}

// apply returns the template with each wildcard replaced by what the same
// wildcard of the filter matched in topic.
func (m *topicMap) apply(topic string) (string, bool) {
	levels := strings.Split(topic, "/")
	var matched []string
	for i, f := range m.from {
		switch {
		case f == "#":
			matched = append(matched, strings.Join(levels[min(i, len(levels)):], "/"))
		case i >= len(levels):
			return "", false
		case f == "+":
			matched = append(matched, levels[i])
		}
	}
	var out []string
	k := 0
	for _, t := range m.to {
		if t == "+" || t == "#" {
			if v := matched[k]; v != "" || t == "+" {
				out = append(out, v)
			}
			k++
			continue
		}
		out = append(out, t)
	}
	return strings.Join(out, "/"), true
}
