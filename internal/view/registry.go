package view

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// topicEntry holds the channels of a topic: the one its first message
// (or the connection graph) made and, for a JSON topic, the raw one of
// its payloads that are not JSON, made when one is seen. seen is when
// the topic was last seen, for eviction.
type topicEntry struct {
	primary *channel
	alt     atomic.Pointer[channel]
	seen    atomic.Int64
	named   atomic.Bool // made by a name, no message yet
}

// registry is the channels of a server, by topic and by id (from 1, in
// order of creation). Past max channels, the least recently seen topic's
// channels are removed to make room (evicted, counted); version counts
// the changes, so that the connections know when to look again.
type registry struct {
	max     int
	changed func()       // called, outside the lock, when channels changed
	clock   atomic.Int64 // counts the messages, to order the topics seen

	mu      sync.RWMutex
	topics  map[string]*topicEntry
	byID    map[uint32]*channel
	lastID  uint32
	version atomic.Uint64

	unshown, evicted atomic.Uint64
}

func (r *registry) init(max int, changed func()) {
	r.max, r.changed = max, changed
	r.topics, r.byID = map[string]*topicEntry{}, map[uint32]*channel{}
}

// now returns the next tick of the clock that orders the topics seen.
func (r *registry) now() int64 { return r.clock.Add(1) }

// observe forwards a message on topic to its channel's subscribers, making
// the channel first if needed. Payloads are checked for JSON only while a
// JSON topic is watched.
func (r *registry) observe(topic string, payload []byte, ts uint64) {
	r.mu.RLock()
	e := r.topics[topic]
	r.mu.RUnlock()
	if e == nil {
		if e = r.add(topic, payload, false); e == nil {
			return
		}
	}
	if e.named.Load() {
		e = r.settle(e, payload)
	}
	e.seen.Store(r.now())
	ch := e.primary
	if ch.encoding == JSONEncoding {
		alt := e.alt.Load()
		if !ch.watched() && (alt == nil || !alt.watched()) {
			return
		}
		if !json.Valid(payload) {
			if alt == nil {
				if alt = r.addAlt(e); alt == nil {
					return
				}
			}
			ch = alt
		}
	}
	ch.forward(payload, ts)
}

// name makes the channel of a topic that the connection graph names, if
// it has none: a JSON one without a schema, since the encoding is not
// known before a message (payloads that are not JSON get the raw channel
// of the topic, as for any JSON topic). Topic filters are not topics.
func (r *registry) name(topic string) {
	if strings.ContainsAny(topic, "+#") {
		return
	}
	r.mu.RLock()
	e := r.topics[topic]
	r.mu.RUnlock()
	if e == nil {
		r.add(topic, nil, true)
	}
}

// add makes the channel of topic, from its first payload or, named, as a
// JSON one without a schema. For a payload, it evicts the least recently
// seen topics to make room; nil, counted, when it cannot. A name takes
// only free room.
func (r *registry) add(topic string, payload []byte, named bool) *topicEntry {
	r.mu.Lock()
	if e := r.topics[topic]; e != nil {
		r.mu.Unlock()
		return e
	}
	if named && len(r.byID) >= r.max {
		r.mu.Unlock() // a name only takes free room: no churn on a big graph
		return nil
	}
	if !r.makeRoom(nil) {
		r.mu.Unlock()
		r.unshown.Add(1)
		return nil
	}
	ch := &channel{topic: topic, encoding: JSONEncoding}
	if !named {
		ch = newChannel(topic, payload)
	}
	e := &topicEntry{primary: ch}
	e.named.Store(named)
	e.seen.Store(r.now())
	r.topics[topic] = e
	r.insert(ch)
	r.mu.Unlock()
	r.changed()
	return e
}

// newChannel returns the channel of topic for its first payload: JSON,
// with a schema inferred from it, or raw.
func newChannel(topic string, payload []byte) *channel {
	ch := &channel{topic: topic, encoding: RawEncoding}
	if json.Valid(payload) {
		ch.encoding = JSONEncoding
		if s := inferSchema(payload); s != "" {
			ch.schemaName, ch.schema, ch.schemaEncoding = topic, s, "jsonschema"
		}
	}
	return ch
}

// settle takes the first message of a topic that a name made: while no
// viewer subscribes to its channel, the channel is replaced by one made
// from the payload (its schema, or raw), under a new id.
func (r *registry) settle(e *topicEntry, payload []byte) *topicEntry {
	r.mu.Lock()
	if !e.named.Swap(false) || r.topics[e.primary.topic] != e || e.primary.watched() || e.alt.Load() != nil {
		r.mu.Unlock()
		return e
	}
	n := &topicEntry{primary: newChannel(e.primary.topic, payload)}
	delete(r.byID, e.primary.id)
	r.topics[e.primary.topic] = n
	r.insert(n.primary)
	r.mu.Unlock()
	r.changed()
	return n
}

// addAlt makes the raw channel of JSON topic e.
func (r *registry) addAlt(e *topicEntry) *channel {
	r.mu.Lock()
	if alt := e.alt.Load(); alt != nil {
		r.mu.Unlock()
		return alt
	}
	if r.topics[e.primary.topic] != e || !r.makeRoom(e) {
		r.mu.Unlock()
		r.unshown.Add(1)
		return nil
	}
	alt := &channel{topic: e.primary.topic, encoding: RawEncoding}
	r.insert(alt)
	e.alt.Store(alt)
	r.mu.Unlock()
	r.changed()
	return alt
}

// makeRoom evicts the least recently seen topics other than keep until
// there is room for one more channel; false when there are none left to
// evict. r.mu is held.
func (r *registry) makeRoom(keep *topicEntry) bool {
	for len(r.byID) >= r.max {
		var oldest *topicEntry
		for _, e := range r.topics {
			if e != keep && (oldest == nil || e.seen.Load() < oldest.seen.Load()) {
				oldest = e
			}
		}
		if oldest == nil {
			return false
		}
		r.evict(oldest)
	}
	return true
}

// evict removes the channels of topic e; r.mu is held.
func (r *registry) evict(e *topicEntry) {
	delete(r.topics, e.primary.topic)
	delete(r.byID, e.primary.id)
	if alt := e.alt.Load(); alt != nil {
		delete(r.byID, alt.id)
	}
	r.evicted.Add(1)
	r.version.Add(1)
}

// insert numbers ch and adds it; r.mu is held.
func (r *registry) insert(ch *channel) {
	r.lastID++
	ch.id = r.lastID
	r.byID[ch.id] = ch
	r.version.Add(1)
}

// channels returns the channels, by id.
func (r *registry) channels() []*channel {
	r.mu.RLock()
	out := make([]*channel, 0, len(r.byID))
	for _, ch := range r.byID {
		out = append(out, ch)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *channel) int { return cmp.Compare(a.id, b.id) })
	return out
}

// channel returns channel id, or nil.
func (r *registry) channel(id uint32) *channel {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byID[id]
}

// counts returns the channels, the messages of topics not shown and the
// topics evicted.
func (r *registry) counts() (channels, unshown, evicted uint64) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return uint64(len(r.byID)), r.unshown.Load(), r.evicted.Load()
}
