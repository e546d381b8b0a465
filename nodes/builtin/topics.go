package builtin

import (
	"container/list"
	"fmt"
)

// defaultMaxTopics is the default max_topics of the bridge and the
// watchdog: how many topics' state each keeps.
const defaultMaxTopics = 10000

// checkMaxTopics checks a max_topics param, 0 meaning the default.
func checkMaxTopics(n int) (int, error) {
	switch {
	case n == 0:
		return defaultMaxTopics, nil
	case n < 0:
		return 0, fmt.Errorf("max_topics %d is negative", n)
	}
	return n, nil
}

// topicTable holds per-topic state for at most max topics; making room
// for a new topic evicts the least recently used one. It is not safe for
// concurrent use: a node's callbacks share it within its callback group.
type topicTable[V any] struct {
	max int
	m   map[string]*list.Element
	lru list.List // of *topicEntry[V], least recently used first
}

type topicEntry[V any] struct {
	topic string
	v     V
}

func newTopicTable[V any](max int) *topicTable[V] {
	t := &topicTable[V]{max: max, m: make(map[string]*list.Element)}
	t.lru.Init()
	return t
}

// get returns the state of topic, marking it used, or nil.
func (t *topicTable[V]) get(topic string) *V {
	e, ok := t.m[topic]
	if !ok {
		return nil
	}
	t.lru.MoveToBack(e)
	return &e.Value.(*topicEntry[V]).v
}

// add adds topic, which must not be in the table, with state v, and
// reports whether it evicted another topic to make room.
func (t *topicTable[V]) add(topic string, v V) (evicted bool) {
	if len(t.m) >= t.max {
		oldest := t.lru.Front()
		delete(t.m, oldest.Value.(*topicEntry[V]).topic)
		t.lru.Remove(oldest)
		evicted = true
	}
	t.m[topic] = t.lru.PushBack(&topicEntry[V]{topic: topic, v: v})
	return evicted
}

// len returns the number of topics held.
func (t *topicTable[V]) len() int { return len(t.m) }
