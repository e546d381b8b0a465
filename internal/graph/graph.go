// Package graph is the description of a running robotexec instance that it
// keeps, retained, on its graph topic (robotexec/<client_id>/graph): its
// nodes with their subscriptions, publications and timers. The node and
// topic commands read the graphs of every instance on a broker.
package graph

import (
	"slices"
	"strings"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/nodes"
)

// Graph is an instance's description.
type Graph struct {
	ClientID string    `json:"client_id"`
	Version  string    `json:"version"`
	Started  time.Time `json:"started"`
	// Broker is the URL of the broker the instance is connected to, or
	// tries: with a list of brokers (a cluster's nodes), which one.
	Broker string `json:"broker,omitempty"`
	// Metrics is the URL of the instance's /metrics, if it serves them.
	Metrics string `json:"metrics,omitempty"`
	Nodes   []Node `json:"nodes"`
}

// Node is a node of an instance.
type Node struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Group is the shared callback group the config put the node in, or
	// empty for the node's own.
	Group         string         `json:"group"`
	Subscriptions []Subscription `json:"subscriptions"`
	Publications  []Publication  `json:"publications"`
	Timers        []Timer        `json:"timers"`
}

// Subscription is a subscription callback of a node.
type Subscription struct {
	Topic    string `json:"topic"`
	Depth    int    `json:"depth"`
	Overflow string `json:"overflow"`
	Callback string `json:"callback"`
	// Group is the mutually exclusive group that serializes the
	// callback, or empty.
	Group string `json:"group,omitempty"`
}

// Publication is a topic a node publishes on: a topic name, or a filter
// for topics known only at run time.
type Publication struct {
	Topic string `json:"topic"`
}

// Timer is a timer callback of a node.
type Timer struct {
	Period   string `json:"period"`
	OneShot  bool   `json:"one_shot,omitempty"`
	Callback string `json:"callback"`
	Group    string `json:"group,omitempty"`
}

// Topic returns the graph topic of the instance whose client ID is id.
func Topic(id string) string { return "robotexec/" + id + "/graph" }

// Build describes built nodes and the callbacks they registered.
func Build(g Graph, ns []*nodes.Node, cbs []executor.Callback) Graph {
	g.Nodes = make([]Node, 0, len(ns))
	for _, n := range ns {
		gn := Node{Name: n.Name(), Type: n.Spec().Type, Group: n.Spec().Group,
			Subscriptions: []Subscription{}, Publications: []Publication{}, Timers: []Timer{}}
		for _, t := range n.Publications() {
			gn.Publications = append(gn.Publications, Publication{Topic: t})
		}
		for _, cb := range cbs {
			if cb.Owner == n.Name() {
				gn.add(cb)
			}
		}
		g.Nodes = append(g.Nodes, gn)
	}
	slices.SortFunc(g.Nodes, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	return g
}

func (gn *Node) add(cb executor.Callback) {
	switch {
	case cb.Subscription != nil:
		o := cb.Subscription.Options()
		gn.Subscriptions = append(gn.Subscriptions, Subscription{Topic: cb.Subscription.Filter(),
			Depth: o.Depth, Overflow: o.Overflow.String(), Callback: cb.Name, Group: cb.Group})
	case cb.Timer != nil:
		gn.Timers = append(gn.Timers, Timer{Period: cb.Timer.Period().String(), OneShot: cb.Timer.OneShot(),
			Callback: cb.Name, Group: cb.Group})
	}
}
