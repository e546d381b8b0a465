package graph

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
)

// Set is the graphs of the instances on a broker, by client ID, as their
// graph topics say, and which of the instances are offline, as their
// status topics say. The zero Set is empty and ready; it is safe for
// concurrent use.
type Set struct {
	mu      sync.Mutex
	byID    map[string]Graph
	offline map[string]bool
}

// ClientID returns the client ID of the instance whose graph topic is
// topic, and whether topic is a graph topic.
func ClientID(topic string) (string, bool) { return instanceOf(topic, "/graph") }

// instanceOf returns the client ID of the instance whose topic of kind
// suffix ("/graph", "/status") is topic, and whether topic is one.
func instanceOf(topic, suffix string) (string, bool) {
	id, ok := strings.CutPrefix(topic, "robotexec/")
	if !ok {
		return "", false
	}
	id, ok = strings.CutSuffix(id, suffix)
	return id, ok && id != "" && !strings.Contains(id, "/")
}

// Put sets the graph of instance id from the payload of its graph topic:
// an empty payload (a clean stop) or one that is not a graph removes it.
// It reports whether the set changed.
func (s *Set) Put(id string, payload []byte) bool {
	var g Graph
	ok := len(payload) > 0 && json.Unmarshal(payload, &g) == nil
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.byID[id]
	if !ok {
		delete(s.byID, id)
		return had && !s.offline[id]
	}
	g.ClientID = id
	if s.byID == nil {
		s.byID = map[string]Graph{}
	}
	s.byID[id] = g
	return !s.offline[id] && (!had || !sameEndpoints(old, g))
}

// StatusID returns the client ID of the instance whose status topic is
// topic, and whether topic is a status topic.
func StatusID(topic string) (string, bool) { return instanceOf(topic, "/status") }

// SetStatus records the payload of instance id's status topic: "offline"
// (a clean stop, or the broker's will for an instance that died) leaves
// its graph out of Endpoints until it is online again; so does an empty
// payload (the status cleared). It reports whether Endpoints changed.
func (s *Set) SetStatus(id string, payload []byte) bool {
	off := len(payload) == 0 || string(payload) == "offline"
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.offline[id] == off {
		return false
	}
	if off {
		if s.offline == nil {
			s.offline = map[string]bool{}
		}
		s.offline[id] = true
	} else {
		delete(s.offline, id)
	}
	_, has := s.byID[id]
	return has
}

// Endpoints returns, for each topic (or topic filter) that a node of an
// instance online publishes on or subscribes to, the nodes that do, as
// NODE@INSTANCE, sorted.
func (s *Set) Endpoints() (publishers, subscribers map[string][]string) {
	publishers, subscribers = map[string][]string{}, map[string][]string{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, g := range s.byID {
		if s.offline[id] {
			continue
		}
		for _, n := range g.Nodes {
			e := n.Name + "@" + id
			for _, p := range n.Publications {
				publishers[p.Topic] = appendNew(publishers[p.Topic], e)
			}
			for _, sub := range n.Subscriptions {
				subscribers[sub.Topic] = appendNew(subscribers[sub.Topic], e)
			}
		}
	}
	for _, m := range []map[string][]string{publishers, subscribers} {
		for _, ids := range m {
			slices.Sort(ids)
		}
	}
	return publishers, subscribers
}

// appendNew appends e to ids unless it is there.
func appendNew(ids []string, e string) []string {
	if slices.Contains(ids, e) {
		return ids
	}
	return append(ids, e)
}

// sameEndpoints reports whether a and b have the same nodes, publishing
// and subscribing to the same topics.
func sameEndpoints(a, b Graph) bool {
	return slices.EqualFunc(a.Nodes, b.Nodes, func(x, y Node) bool {
		return x.Name == y.Name &&
			slices.EqualFunc(x.Publications, y.Publications, func(p, q Publication) bool { return p.Topic == q.Topic }) &&
			slices.EqualFunc(x.Subscriptions, y.Subscriptions, func(p, q Subscription) bool { return p.Topic == q.Topic })
	})
}
