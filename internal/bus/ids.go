package bus

import "hash/fnv"

// Subscription identifiers (MQTT 5) say which of the router's filters a
// received message is for. An identifier is a slot, which names a filter,
// and an attachment number: ID = slot<<attachBits | number.
//
// The slot comes from the filter's text, so that it is the same in every
// run of the process: a persistent session's broker sends, right after
// connecting, the messages it queued during the process's absence with
// the identifiers of the previous run's subscriptions, and they must
// reach the same filters. Two filters of one run whose slots collide (one
// chance in about 40,000 for 100 filters) take the next free slot, in the
// order they attach; with the same config that order, and so the slots,
// are the same at the next run.
//
// Each attachment of a subscription subscribes its filter again with a
// new number, so that the retained messages the broker sends for that
// SUBSCRIBE, which carry its identifier, go to the new subscription only:
// the others of the filter had theirs. On a new connection the filter is
// subscribed again with its last identifier, and every subscription of
// the filter takes those copies (Renewed).

const (
	// attachBits is the number of low bits of an identifier that count
	// the attachments to its filter (modulo 64).
	attachBits = 6
	// slots is the number of slots: MQTT's largest identifier is
	// 268,435,455, 2^28-1. Slot 0 is not used, so no identifier is 0.
	slots = 1<<(28-attachBits) - 1
)

// WireFilter is a filter that a [Router] asks its [Remote] to subscribe to.
type WireFilter struct {
	// Filter is the topic filter, $share/GROUP/FILTER included.
	Filter string
	// QoS is the highest QoS the filter's subscriptions ask for.
	QoS byte
	// ID is the subscription identifier that the broker is to put on the
	// messages it sends for this subscription, retained ones included.
	ID uint32
	// NoLocal asks the broker never to send the router's own publications
	// on this filter: the subscriptions of the process had them
	// directly. Never set for a shared subscription.
	NoLocal bool
}

// freeSlot returns the slot of a new wire filter f; r.mu must be held.
func (r *Router) freeSlot(f string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(f))
	s := 1 + h.Sum32()%slots
	for r.slots[s] != nil {
		s = s%slots + 1
	}
	return s
}

// nextID returns the identifier of a new attachment to w; r.mu must be
// held. The count of attachments survives the filter's removal, so that
// the retained messages still on their way to a detached subscription do
// not reach a new one as its own.
func (r *Router) nextID(w *wireFilter) uint32 {
	n := r.attaches[w.filter]
	r.attaches[w.filter] = n + 1
	return w.slot<<attachBits | n%(1<<attachBits)
}

// byID appends the subscriptions that a message on topic, with the
// identifier id, is for: every subscription of the filter that id names,
// or, for a retained message, those that take the copies of the
// SUBSCRIBE that id stands for (the one of its attachment, or of the
// filter's renewal on a new connection), unless it is a value they had
// (see retainedvalues.go).
// An identifier of no filter of the router's (a previous run's), or of a
// filter that does not match topic, names none. again says that the
// broker sent m again (see ReceiveAgain). r.mu must be held.
func (r *Router) byID(id uint32, m *Message, again bool, dst []*Subscription) []*Subscription {
	w := r.slots[id>>attachBits]
	if w == nil || !Match(w.route, m.Topic) {
		return dst
	}
	if !m.Retained {
		return append(dst, w.subs...)
	}
	for _, s := range w.subs {
		j := r.attached[s]
		if (j.id == id || j.renewed == id) && r.newRetained(s, m, again) {
			dst = append(dst, s)
		}
	}
	return dst
}
