package bus

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Index finds the subscriptions whose filters match a topic. It keeps the
// filters in a tree of topic levels, so a lookup costs the depth of the
// topic, not the number of subscriptions. A shared subscription,
// $share/GROUP/FILTER, is indexed under FILTER. The [Router] uses it to fan
// messages out. The zero Index is empty and ready to use.
type Index struct {
	mu   sync.RWMutex
	root rnode
	gen  atomic.Uint64
	n    int
}

type rnode struct {
	children map[string]*rnode
	plus     *rnode
	hash     []*Subscription // subscriptions ending in '#' here
	subs     []*Subscription // subscriptions ending exactly here
}

// Generation changes whenever a subscription is added or removed; callers
// that cache lookups compare it.
func (r *Index) Generation() uint64 { return r.gen.Load() }

// touch changes the generation, so that callers that cache lookups look
// again.
func (r *Index) touch() { r.gen.Add(1) }

// Len returns the number of subscriptions.
func (r *Index) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.n
}

// Add adds s under its route filter (see [RouteFilter]).
func (r *Index) Add(s *Subscription) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := &r.root
	for _, level := range strings.Split(s.route(), "/") {
		switch level {
		case "#":
			n.hash = append(n.hash, s)
			r.n++
			r.gen.Add(1)
			return
		case "+":
			if n.plus == nil {
				n.plus = &rnode{}
			}
			n = n.plus
		default:
			if n.children == nil {
				n.children = make(map[string]*rnode)
			}
			c := n.children[level]
			if c == nil {
				c = &rnode{}
				n.children[level] = c
			}
			n = c
		}
	}
	n.subs = append(n.subs, s)
	r.n++
	r.gen.Add(1)
}

// Remove removes s; it reports whether s was there.
func (r *Index) Remove(s *Subscription) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.root.remove(s, s.route()) {
		return false
	}
	r.n--
	r.gen.Add(1)
	return true
}

func (n *rnode) remove(s *Subscription, filter string) bool {
	level, rest, more := cut(filter)
	if level == "#" {
		return removeSub(&n.hash, s)
	}
	var c *rnode
	if level == "+" {
		c = n.plus
	} else {
		c = n.children[level]
	}
	if c == nil {
		return false
	}
	ok := false
	if more {
		ok = c.remove(s, rest)
	} else {
		ok = removeSub(&c.subs, s)
	}
	if ok && c.empty() {
		if level == "+" {
			n.plus = nil
		} else {
			delete(n.children, level)
		}
	}
	return ok
}

func (n *rnode) empty() bool {
	return len(n.children) == 0 && n.plus == nil && len(n.hash) == 0 && len(n.subs) == 0
}

// removeSub removes s from list. slices.Delete clears the slot it vacates,
// so that the list's backing array does not keep a removed subscription (and
// the messages in its queue) reachable.
func removeSub(list *[]*Subscription, s *Subscription) bool {
	if i := slices.Index(*list, s); i >= 0 {
		*list = slices.Delete(*list, i, i+1)
		return true
	}
	return false
}

// Match appends to dst every subscription whose route filter matches topic
// and returns the result, each once, in no particular but stable order.
// As with the package's Match, none matches the empty topic.
func (r *Index) Match(topic string, dst []*Subscription) []*Subscription {
	if topic == "" {
		return dst
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	dollar := len(topic) > 0 && topic[0] == '$'
	return r.root.match(topic, dst, dollar)
}

func (n *rnode) match(topic string, dst []*Subscription, first bool) []*Subscription {
	// '#' matches the parent level too, and wildcards at the first level
	// skip topics that start with '$'.
	if !first {
		dst = append(dst, n.hash...)
	}
	level, rest, more := cut(topic)
	if c := n.children[level]; c != nil {
		dst = c.step(rest, more, dst)
	}
	if n.plus != nil && !first {
		dst = n.plus.step(rest, more, dst)
	}
	return dst
}

func (n *rnode) step(rest string, more bool, dst []*Subscription) []*Subscription {
	if !more {
		dst = append(dst, n.subs...)
		return append(dst, n.hash...)
	}
	return n.match(rest, dst, false)
}
