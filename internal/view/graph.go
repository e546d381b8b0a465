package view

import (
	"maps"
	"slices"
	"strings"

	"github.com/robotexec/robotexec/subscribers"
)

// Graph is a connection graph: for each topic, the IDs of the nodes that
// publish on it and of those that subscribe to it.
type Graph struct {
	// Publishers and Subscribers map a topic (or a topic filter, as a
	// node declared it) to its nodes' IDs.
	Publishers, Subscribers map[string][]string
}

// graphState is the server's connection graph and its version, counted
// from 1 on each SetGraph.
type graphState struct {
	g       Graph
	version uint64
}

// joinedGraph is the connection graph with its topic filters joined with
// the channels' topics, for the graph's version and the registry's.
type joinedGraph struct {
	g                   Graph
	version, regVersion uint64
}

// The JSON messages of the connection graph.
type (
	graphUpdateMsg struct {
		Op                 string            `json:"op"`
		PublishedTopics    []publishedTopic  `json:"publishedTopics"`
		SubscribedTopics   []subscribedTopic `json:"subscribedTopics"`
		AdvertisedServices []struct{}        `json:"advertisedServices"`
		RemovedTopics      []string          `json:"removedTopics"`
		RemovedServices    []string          `json:"removedServices"`
	}
	publishedTopic struct {
		Name         string   `json:"name"`
		PublisherIDs []string `json:"publisherIds"`
	}
	subscribedTopic struct {
		Name          string   `json:"name"`
		SubscriberIDs []string `json:"subscriberIds"`
	}
)

// SetGraph replaces the connection graph: the viewers that subscribe to
// it (with Options.ConnectionGraph) get what changed. The topics it names
// (not the topic filters) get a channel before any message of theirs,
// advertised as JSON. It never waits for a viewer; g must not be changed
// afterwards.
func (s *Server) SetGraph(g Graph) {
	for _, t := range topicsOf(g) {
		s.reg.name(t)
	}
	s.mu.Lock()
	s.graph = graphState{g: g, version: s.graph.version + 1}
	s.mu.Unlock()
	s.wakeAll()
}

// currentGraph returns the connection graph, each node on a topic
// filter shown on the channels' topics that the filter matches too (on
// the filter alone when it matches none), and its versions. It is worked
// out once per version of the graph and of the channels, by the first
// writer that asks, outside s.mu: SetGraph never waits for it.
func (s *Server) currentGraph() joinedGraph {
	rv := s.reg.version.Load()
	s.mu.Lock()
	st, j := s.graph, s.joined
	s.mu.Unlock()
	if j.version == st.version && j.regVersion == rv {
		return j
	}
	j = joinedGraph{g: Graph{Publishers: s.joinFilters(st.g.Publishers), Subscribers: s.joinFilters(st.g.Subscribers)},
		version: st.version, regVersion: rv}
	s.mu.Lock()
	if s.graph.version == j.version {
		s.joined = j
	}
	s.mu.Unlock()
	return j
}

// joinFilters returns byTopic with the IDs on each topic filter also on
// the channels' topics that it matches; a filter that matches none
// stays.
func (s *Server) joinFilters(byTopic map[string][]string) map[string][]string {
	out := make(map[string][]string, len(byTopic))
	var filters []string
	for t, ids := range byTopic {
		if strings.ContainsAny(t, "+#") {
			filters = append(filters, t)
		} else {
			out[t] = ids
		}
	}
	if len(filters) == 0 {
		return out
	}
	slices.Sort(filters)
	matched := map[string]bool{}
	for _, ch := range s.reg.channels() {
		for _, f := range filters {
			if subscribers.Match(f, ch.topic) {
				matched[f] = true
				out[ch.topic] = mergeIDs(out[ch.topic], byTopic[f])
			}
		}
	}
	for _, f := range filters {
		if !matched[f] {
			out[f] = byTopic[f]
		}
	}
	return out
}

// mergeIDs returns the IDs of a and b, sorted, without repeats; a is not
// changed.
func mergeIDs(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// subscribeGraph starts (on) or stops sending the viewer the connection
// graph: at once in whole, then what changes. c.mu is held.
func (c *conn) subscribeGraph(on bool) {
	c.graphOn, c.graphPending, c.graphSent = on, on, Graph{}
	c.wake()
}

// graphUpdate returns the update of the connection graph that the viewer
// has not had yet, or nil; c.mu is held. The viewer sees the topics its
// read filters match.
func (c *conn) graphUpdate() *graphUpdateMsg {
	if !c.graphOn {
		return nil
	}
	st := c.s.currentGraph()
	if !c.graphPending && st.version == c.graphVersion && st.regVersion == c.graphRegVersion {
		return nil
	}
	now := Graph{Publishers: c.readable(st.g.Publishers), Subscribers: c.readable(st.g.Subscribers)}
	old, whole := c.graphSent, c.graphPending
	c.graphSent, c.graphVersion, c.graphRegVersion, c.graphPending = now, st.version, st.regVersion, false
	m := &graphUpdateMsg{Op: "connectionGraphUpdate", PublishedTopics: []publishedTopic{},
		SubscribedTopics: []subscribedTopic{}, AdvertisedServices: []struct{}{},
		RemovedTopics: []string{}, RemovedServices: []string{}}
	gone := map[string]bool{}
	for _, t := range topicsOf(old) {
		if now.Publishers[t] == nil && now.Subscribers[t] == nil {
			gone[t] = true
			m.RemovedTopics = append(m.RemovedTopics, t)
		}
	}
	for _, t := range changed(old.Publishers, now.Publishers) {
		if !gone[t] {
			m.PublishedTopics = append(m.PublishedTopics, publishedTopic{Name: t, PublisherIDs: orEmpty(now.Publishers[t])})
		}
	}
	for _, t := range changed(old.Subscribers, now.Subscribers) {
		if !gone[t] {
			m.SubscribedTopics = append(m.SubscribedTopics, subscribedTopic{Name: t, SubscriberIDs: orEmpty(now.Subscribers[t])})
		}
	}
	if !whole && len(m.PublishedTopics)+len(m.SubscribedTopics)+len(m.RemovedTopics) == 0 {
		return nil
	}
	return m
}

// readable returns the entries of byTopic whose topic the viewer may read.
func (c *conn) readable(byTopic map[string][]string) map[string][]string {
	out := make(map[string][]string, len(byTopic))
	for t, ids := range byTopic {
		if len(ids) > 0 && matches(c.user.Read, t) {
			out[t] = ids
		}
	}
	return out
}

// changed returns, sorted, the topics of now whose IDs differ from old's,
// and those of old that now has not (their IDs are now none).
func changed(old, now map[string][]string) []string {
	var out []string
	for t, ids := range now {
		if !slices.Equal(old[t], ids) {
			out = append(out, t)
		}
	}
	for t := range old {
		if now[t] == nil {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// topicsOf returns the topics of g, sorted, without repeats.
func topicsOf(g Graph) []string {
	ts := slices.AppendSeq(slices.Collect(maps.Keys(g.Publishers)), maps.Keys(g.Subscribers))
	slices.Sort(ts)
	return slices.Compact(ts)
}

func orEmpty(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}
