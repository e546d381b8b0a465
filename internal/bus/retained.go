package bus

import "context"

// The router's retained messages: without a remote it keeps them, as a
// broker would, for the subscriptions that attach later; with one, the
// broker keeps them and the router delivers what the broker does not send
// back (No Local).

// ownRetained returns the retained messages of the router's own
// publications that s matches and that the broker keeps but does not send
// back (No Local applied to retained messages): the Audience knows them
// (see RetainKeeper).
func (r *Router) ownRetained(s *Subscription) []Message {
	k, ok := r.opts.Audience.(RetainKeeper)
	if !ok || !r.inProcess() || s.Shared() {
		return nil
	}
	return k.OwnRetained(s.filter)
}

// retainedFor returns the kept retained messages that s matches; r.mu must
// be held. Publishers of retained messages match subscriptions under r.mu
// too, so a subscription attaching meanwhile gets such a message exactly
// once, live if it attached first, retained if not.
func (r *Router) retainedFor(s *Subscription) []Message {
	if s.Shared() {
		return nil // as in MQTT: no retained messages for shared subscriptions
	}
	var out []Message
	for topic, m := range r.retained {
		if Match(s.filter, topic) {
			out = append(out, m)
		}
	}
	return out
}

// deliverRetained delivers the retained messages ms to s, a subscription
// attaching; with a remote, each that s has not had yet.
func (r *Router) deliverRetained(s *Subscription, ms []Message) {
	for i := range ms {
		if r.remote != nil {
			r.mu.Lock()
			first := r.newRetained(s, &ms[i], false)
			r.mu.Unlock()
			if !first {
				continue
			}
		}
		s.deliver(context.Background(), &ms[i], stamp{}) //nolint:errcheck // a Background context never ends
	}
}

// publishRetained is publish of a retained message, which the remote
// always gets: the broker keeps it for later subscribers.
func (r *Router) publishRetained(m *Message, subs []*Subscription, offer offering) (int, error) {
	var buf [8]*Subscription
	if r.keepsRetained() {
		r.mu.Lock()
		// Matched again under the lock, so that a subscription attaching
		// meanwhile gets the message once (see retainedFor).
		subs = r.localMatch(m.Topic, buf[:0])
		r.retain(*m)
		r.mu.Unlock()
	}
	live := *m
	live.Retained = false // as in MQTT: live deliveries carry no retain flag
	n, err := offer.deliver(&live, stamp{}, subs)
	if err != nil || r.remote == nil {
		return n, err
	}
	r.noteDelivered(m, subs)
	return n, r.remote.Publish(*m)
}

// retain stores m as its topic's retained message (an empty payload
// clears it instead); r.mu must be held.
func (r *Router) retain(m Message) {
	if len(m.Payload) == 0 {
		delete(r.retained, m.Topic)
		return
	}
	if r.retained == nil {
		r.retained = make(map[string]Message)
	}
	r.retained[m.Topic] = m
}
