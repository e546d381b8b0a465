package view

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
)

// channel is an advertised channel: a topic in one encoding, and the
// subscriptions of viewers to it.
type channel struct {
	id             uint32
	topic          string
	encoding       string
	schemaName     string
	schema         string
	schemaEncoding string

	mu   sync.Mutex                // serializes changes of subs
	subs atomic.Pointer[[]viewSub] // copied on change, read by forward
}

// viewSub is a viewer's subscription to a channel.
type viewSub struct {
	c  *conn
	id uint32
}

// topicEntry holds the channels of a topic: the one its first message
// made and, for a JSON topic, the raw one of its payloads that are not
// JSON, made when one is seen.
type topicEntry struct {
	primary *channel
	alt     atomic.Pointer[channel]
}

// registry is the channels of a server, by topic and by id (from 1, in
// order of creation; channels are never removed).
type registry struct {
	max     int
	added   func() // called, outside the lock, when channels were added
	mu      sync.RWMutex
	topics  map[string]*topicEntry
	all     []*channel
	unshown atomic.Uint64
}

func (r *registry) init(max int, added func()) {
	r.max, r.added, r.topics = max, added, map[string]*topicEntry{}
}

// observe forwards a message on topic to its channel's subscribers, making
// the channel first if needed. Payloads are checked for JSON only while a
// JSON topic is watched.
func (r *registry) observe(topic string, payload []byte, ts uint64) {
	r.mu.RLock()
	e := r.topics[topic]
	r.mu.RUnlock()
	if e == nil {
		if e = r.add(topic, payload); e == nil {
			return
		}
	}
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

// add makes the channel of topic from its first payload; nil, counted,
// beyond the bound.
func (r *registry) add(topic string, payload []byte) *topicEntry {
	r.mu.Lock()
	if e := r.topics[topic]; e != nil {
		r.mu.Unlock()
		return e
	}
	if len(r.all) >= r.max {
		r.mu.Unlock()
		r.unshown.Add(1)
		return nil
	}
	ch := &channel{topic: topic, encoding: RawEncoding}
	if json.Valid(payload) {
		ch.encoding = JSONEncoding
		if s := inferSchema(payload); s != "" {
			ch.schemaName, ch.schema, ch.schemaEncoding = topic, s, "jsonschema"
		}
	}
	e := &topicEntry{primary: ch}
	r.topics[topic] = e
	r.append(ch)
	r.mu.Unlock()
	r.added()
	return e
}

// addAlt makes the raw channel of JSON topic e.
func (r *registry) addAlt(e *topicEntry) *channel {
	r.mu.Lock()
	if alt := e.alt.Load(); alt != nil {
		r.mu.Unlock()
		return alt
	}
	if len(r.all) >= r.max {
		r.mu.Unlock()
		r.unshown.Add(1)
		return nil
	}
	alt := &channel{topic: e.primary.topic, encoding: RawEncoding}
	r.append(alt)
	e.alt.Store(alt)
	r.mu.Unlock()
	r.added()
	return alt
}

// append numbers ch and adds it; r.mu is held.
func (r *registry) append(ch *channel) {
	ch.id = uint32(len(r.all) + 1)
	r.all = append(r.all, ch)
}

// from returns the channels from index i on.
func (r *registry) from(i int) []*channel {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if i >= len(r.all) {
		return nil
	}
	return slices.Clip(r.all[i:])
}

// byID returns channel id, or nil.
func (r *registry) byID(id uint32) *channel {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if id == 0 || int(id) > len(r.all) {
		return nil
	}
	return r.all[id-1]
}

// counts returns the channels made and the messages of topics not shown.
func (r *registry) counts() (channels, unshown uint64) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return uint64(len(r.all)), r.unshown.Load()
}

// watched reports whether a viewer subscribes to ch.
func (ch *channel) watched() bool {
	s := ch.subs.Load()
	return s != nil && len(*s) > 0
}

// forward offers a message to the subscribers of ch, one copy of its
// payload for all of them.
func (ch *channel) forward(payload []byte, ts uint64) {
	subs := ch.subs.Load()
	if subs == nil || len(*subs) == 0 {
		return
	}
	p := bytes.Clone(payload)
	for _, s := range *subs {
		s.c.offer(frame{sub: s.id, ch: ch, ts: ts, payload: p})
	}
}

// subscribe adds a viewer's subscription.
func (ch *channel) subscribe(s viewSub) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	var subs []viewSub
	if old := ch.subs.Load(); old != nil {
		subs = slices.Clone(*old)
	}
	subs = append(subs, s)
	ch.subs.Store(&subs)
}

// unsubscribe removes a viewer's subscription.
func (ch *channel) unsubscribe(s viewSub) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	old := ch.subs.Load()
	if old == nil {
		return
	}
	subs := slices.DeleteFunc(slices.Clone(*old), func(x viewSub) bool { return x == s })
	ch.subs.Store(&subs)
}
