package bus

import (
	"context"
	"slices"
)

// The router's side facing the broker: what a Remote is, and what the
// router does with what the remote receives.

// Remote carries a [Router]'s messages beyond the process: the connection
// to an MQTT broker of package internal/mqtt. What it receives for the
// router's filters it hands to [Receive], in arrival order.
type Remote interface {
	// Subscribe subscribes w at the broker, replacing the options of an
	// earlier subscription of the same filter (its identifier among
	// them), and makes the broker send the filter's retained messages.
	// The router calls it each time a subscription attaches. It may wait
	// for the broker's answer, and fails when the broker refuses. On each
	// new connection the remote subscribes its filters again, asking for
	// their retained messages, and tells the router so first
	// ([Renewed]).
	Subscribe(w WireFilter) error
	// Unsubscribe says that no attached subscription uses filter any
	// more. It must not block: subscriptions detach inside callbacks.
	Unsubscribe(filter string)
	// Publish sends m beyond the process. It must not wait for the
	// executor, so that callbacks may publish; it fails when it knows at
	// once that m cannot go.
	Publish(m Message) error
}

// Audience tells a router whether anyone beyond its process wants the
// messages of a topic: the embedded broker knows (see package
// internal/mqtt/broker). A publication that nobody else wants stays in
// the process, unless it is retained.
type Audience interface {
	// Generation changes whenever Wanted's answers may change.
	Generation() uint64
	// Wanted reports whether anyone beyond the process wants the
	// messages of topic. It may be slow: the router asks it again only
	// when the generation changed.
	Wanted(topic string) bool
}

// RetainKeeper is an [Audience] that knows the retained messages the
// broker keeps (the embedded broker): an in-process router delivers a
// subscription attached later the retained messages of its own that the
// broker keeps, which a broker that applies No Local to retained messages
// does not send.
type RetainKeeper interface {
	// OwnRetained returns the retained messages that the router's own
	// client published and the broker keeps, on topics that filter
	// matches.
	OwnRetained(filter string) []Message
}

// Receipt says what became of a message the remote received.
type Receipt struct {
	// Matched counts the subscriptions it was for.
	Matched int
	// Accepted counts those that took it into their queues.
	Accepted int
}

// Receive delivers m, which the remote received with the subscription
// identifiers ids (none from an MQTT 3.1.1 broker), to the subscriptions
// it is for (see [Router]). With the Block policy it waits for room in a
// full queue.
func Receive(r *Router, m *Message, ids []uint32) Receipt {
	return r.receive(m, ids, false)
}

// ReceiveAgain is Receive of a message that the broker sent again (QoS 1
// or 2, DUP) on a new connection of the session. A retained copy sent
// again then goes only to the subscriptions that have no value of its
// topic yet: the others had it (or, if they missed it, the new
// connection's SUBSCRIBE brings the topic's current value), and it may be
// older than what they had since.
func ReceiveAgain(r *Router, m *Message, ids []uint32) Receipt {
	return r.receive(m, ids, true)
}

func (r *Router) receive(m *Message, ids []uint32, again bool) Receipt {
	var buf [8]*Subscription
	subs := r.recipients(m, ids, again, buf[:0])
	if !m.Retained {
		r.noteDelivered(m, subs)
	}
	rc := Receipt{Matched: len(subs)}
	for _, s := range subs {
		if ok, _ := s.deliver(context.Background(), m, stamp{}); ok {
			rc.Accepted++
		}
	}
	clear(subs)
	if tap := r.tap.Load(); tap != nil && rc.Matched > 0 {
		(*tap)(m)
	}
	return rc
}

// recipients appends the subscriptions that m, received with the
// identifiers ids (again: sent again), is for: by identifier, or without
// any, every subscription whose filter matches m's topic (a retained
// message only the non-shared ones to which its value is news).
func (r *Router) recipients(m *Message, ids []uint32, again bool, dst []*Subscription) []*Subscription {
	if len(ids) > 0 && r.remote != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, id := range ids {
			dst = r.byID(id, m, again, dst)
		}
		return dst
	}
	dst = r.index.Match(m.Topic, dst)
	if !m.Retained || r.remote == nil {
		return dst
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.DeleteFunc(dst, func(s *Subscription) bool {
		return s.Shared() || !r.newRetained(s, m, again)
	})
}

// TapInputs calls f, from then on, with each message that the remote
// received and offered to at least one subscription, after offering it:
// robotexec run -record records them. f must not keep m or block; nil
// stops it.
func TapInputs(r *Router, f func(m *Message)) {
	if f == nil {
		r.tap.Store(nil)
		return
	}
	r.tap.Store(&f)
}

// Refuse counts a drop for reason on every subscription that m, which the
// remote received with the identifiers ids and refused, was for.
func Refuse(r *Router, m *Message, ids []uint32, reason Reason) {
	var buf [8]*Subscription
	subs := buf[:0]
	if len(ids) == 0 && m.Retained {
		// Not recorded as had: a later copy of it may come whole.
		subs = slices.DeleteFunc(r.index.Match(m.Topic, subs), (*Subscription).Shared)
	} else {
		subs = r.recipients(m, ids, false, subs)
	}
	for _, s := range subs {
		s.Drop(reason)
	}
}
