package bus

import "hash/maphash"

// With a remote, the broker sends a filter's retained messages at each
// SUBSCRIBE: when a subscription attaches, and on every new connection,
// since a retained message may have changed while the process was away
// (a broker keeps no QoS 0 message for an absent client, and may have
// lost the session). A subscription is to get each retained value once:
// the router remembers, per subscription and retained topic, a hash of
// the last value the subscription had there (a retained copy, a live
// message on that topic, or a retained publication of the process), and
// drops a retained copy equal to it. A retained copy that differs is
// news, and is delivered, unless the broker sent it again (QoS 1 or 2,
// DUP, after a reconnection): that one may be older than what the
// subscription had since, and the new connection's SUBSCRIBE brings the
// current value anyway.
//
// One case stays ambiguous, since a live message does not say whether it
// was published retained: on a topic whose publishers mix retained and
// non-retained messages, a subscription that had a non-retained message
// last gets the retained one again after a reconnection.

// retainedValue returns the hash that stands for payload among retained
// values.
func (r *Router) retainedValue(payload []byte) uint64 {
	return maphash.Bytes(r.seed, payload)
}

// newRetained reports whether the retained copy m is news to s, and
// records it as s's value of m's topic. A copy sent again (again) is
// news only to a subscription that has no value of the topic. r.mu must
// be held.
func (r *Router) newRetained(s *Subscription, m *Message, again bool) bool {
	j := r.attached[s]
	if j == nil {
		return false
	}
	h := r.retainedValue(m.Payload)
	if old, ok := j.seen[m.Topic]; ok && (old == h || again) {
		return false
	}
	r.record(j, m.Topic, h)
	return true
}

// record records h as the value j's subscription had last on the
// retained topic; r.mu must be held.
func (r *Router) record(j *joined, topic string, h uint64) {
	if j.seen == nil {
		j.seen = make(map[string]uint64)
	}
	if _, ok := j.seen[topic]; !ok {
		r.tracked.Add(1)
	}
	j.seen[topic] = h
}

// noteLive records the live message m as the value that subs had last
// on its topic, for those that had a retained value there. r.mu must be
// held.
func (r *Router) noteLive(m *Message, subs []*Subscription) {
	var h uint64
	hashed := false
	for _, s := range subs {
		j := r.attached[s]
		if j == nil {
			continue
		}
		if _, ok := j.seen[m.Topic]; !ok {
			continue
		}
		if !hashed {
			h, hashed = r.retainedValue(m.Payload), true
		}
		j.seen[m.Topic] = h
	}
}

// noteDelivered records m, a message the router delivered to the local
// subscriptions subs, as their last value of its topic: all of them for
// a retained message, which the broker may send back at a later
// SUBSCRIBE, and those that had a retained value there for a live one.
// It costs nothing while no subscription had a retained value.
// The check is kept small enough to be inlined: a publication with
// nothing to record makes no call.
func (r *Router) noteDelivered(m *Message, subs []*Subscription) {
	if r.remote != nil && (m.Retained || r.tracked.Load() > 0) {
		r.recordDelivered(m, subs)
	}
}

// recordDelivered is noteDelivered of a message it has to record.
func (r *Router) recordDelivered(m *Message, subs []*Subscription) {
	if len(subs) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !m.Retained {
		r.noteLive(m, subs)
		return
	}
	h := r.retainedValue(m.Payload)
	for _, s := range subs {
		if j := r.attached[s]; j != nil && !s.Shared() {
			r.record(j, m.Topic, h)
		}
	}
}

// forget drops j's retained values from the count of them; r.mu must be
// held.
func (r *Router) forget(j *joined) {
	if j != nil {
		r.tracked.Add(-int64(len(j.seen)))
	}
}

// Renewed says that the remote subscribed filter again with the
// identifier id, asking for its retained messages: on a new connection.
// Every subscription of the filter takes the retained copies that carry
// id, each one it has not had (see above).
func Renewed(r *Router, filter string, id uint32) {
	if r.remote == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.filters[filter]
	if w == nil {
		return
	}
	for _, s := range w.subs {
		if j := r.attached[s]; j != nil {
			j.renewed = id
		}
	}
}
