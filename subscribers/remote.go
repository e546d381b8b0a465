package subscribers

import "slices"

// The router's side facing the broker: what a Remote is, and what the
// router does with what the remote receives.

// Remote carries a [Router]'s messages beyond the process: the connection
// to an MQTT broker of package subscribers/mqtt. What it receives for the
// router's filters it hands to [Router.Receive], in arrival order.
type Remote interface {
	// Subscribe asks for the messages of filter, as a subscription wrote
	// it ($share/GROUP/FILTER included), at QoS qos, the highest that the
	// subscriptions of that filter ask for. The router calls it each
	// time a subscription of the filter attaches. It may wait for the
	// broker's answer, and fails when the broker refuses.
	Subscribe(filter string, qos byte) error
	// Unsubscribe says that no attached subscription uses filter any
	// more. It must not block: subscriptions detach inside callbacks.
	Unsubscribe(filter string)
	// Publish sends m beyond the process. It must not wait for the
	// executor, so that callbacks may publish. It either fails, and never
	// calls sent, or takes m and calls sent, when not nil, once: when it
	// has handed m to a connection, with the connection's number (as
	// ConnectionLost numbers them; the one that will send it, for one
	// kept while reconnecting), or with the error that kept it from one.
	Publish(m Message, sent Sent) error
}

// Audience tells a router whether anyone beyond its process wants the
// messages of a topic: the embedded broker knows (see package
// subscribers/mqtt/broker). A publication that nobody else wants stays in
// the process, unless it is retained.
type Audience interface {
	// Generation changes whenever Wanted's answers may change.
	Generation() uint64
	// Wanted reports whether anyone beyond the process wants the
	// messages of topic. It may be slow: the router asks it again only
	// when the generation changed.
	Wanted(topic string) bool
}

// Sent is told which connection of a [Remote] took a publication.
type Sent interface {
	Sent(conn uint64, err error)
}

// Receipt says what became of a message the remote received.
type Receipt struct {
	// Matched counts the subscriptions whose filters match its topic.
	Matched int
	// Accepted counts those that took it into their queues.
	Accepted int
	// Echo says it was the echo of a local publication: the
	// subscriptions that had it locally did not get it again.
	Echo bool
}

// Receive delivers m, which the remote received, to the matching
// subscriptions, except those that had it as a local publication (see
// Router). With the Block policy it waits for room in a full queue.
func (r *Router) Receive(m *Message) Receipt {
	var buf [8]*Subscription
	subs := r.index.Match(m.Topic, buf[:0])
	rc := Receipt{Matched: len(subs)}
	if len(subs) == 0 {
		return rc
	}
	var had []*Subscription
	if r.echo != nil {
		had, rc.Echo = r.echo.match(m)
	}
	for _, s := range subs {
		if rc.Echo && slices.Contains(had, s) {
			s.echoed()
			continue
		}
		if s.deliver(m) {
			rc.Accepted++
		}
	}
	clear(subs)
	return rc
}

// Refuse counts a drop for reason on every subscription that a message on
// topic, which the remote received and refused, would have gone to.
func (r *Router) Refuse(topic string, reason Reason) {
	var buf [8]*Subscription
	for _, s := range r.index.Match(topic, buf[:0]) {
		s.Drop(reason)
	}
}

// ConnectionLost tells the router that the remote's connections up to
// number conn were lost, once the remote has handed over everything the
// broker was to send of what it got on them (package subscribers/mqtt
// fences the next connection for that): the echoes still awaited of QoS 0
// publications handed to those connections, and with clean all of those
// (a clean session's broker forgets what it had not sent), will not come.
func (r *Router) ConnectionLost(conn uint64, clean bool) {
	if r.echo != nil {
		r.echo.lost(conn, clean)
	}
}

// EchoStats counts the echo matching of a router.
type EchoStats struct {
	// Matched counts received messages recognized as echoes.
	Matched uint64
	// GivenUp counts awaited echoes given up: after a lost connection,
	// for their age, or beyond the bound.
	GivenUp uint64
	// Awaited is the number of echoes awaited now.
	Awaited int
}

// EchoStats returns the router's echo counters; all zero when it matches
// no echoes.
func (r *Router) EchoStats() EchoStats {
	if r.echo == nil {
		return EchoStats{}
	}
	return r.echo.stats()
}
