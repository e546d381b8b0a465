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
	// has handed m over to its connection (or to the store of one it is
	// making), with the hand-over's number, which grows with each
	// hand-over (see Router.Fence), or with the error that kept it from
	// one.
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

// RetainKeeper is an [Audience] that knows the retained messages the
// broker keeps (the embedded broker): a router whose remote sends it none
// of its own publications back (RouterOptions.NoEcho) delivers a
// subscription attached later the retained messages of its own that the
// broker keeps, which the broker does not send.
type RetainKeeper interface {
	// OwnRetained returns the retained messages that the router's own
	// client published and the broker keeps, on topics that filter
	// matches.
	OwnRetained(filter string) []Message
}

// Sent is told when a [Remote] has handed a publication over.
type Sent interface {
	Sent(seq uint64, err error)
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
// subscriptions. The echo of a local publication goes to the shared
// subscriptions only: the others had it locally, or attached after it (the
// broker would not have sent it to them either). With the Block policy it
// waits for room in a full queue.
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
	inputs := 0
	for _, s := range subs {
		if rc.Echo && !s.Shared() {
			if slices.Contains(had, s) {
				s.echoed()
			}
			continue
		}
		inputs++
		if s.deliver(m) {
			rc.Accepted++
		}
	}
	clear(subs)
	if tap := r.tap.Load(); tap != nil && inputs > 0 {
		(*tap)(m)
	}
	return rc
}

// TapInputs calls f, from then on, with each message that the remote
// received and offered to at least one subscription (not the echo of a
// local publication to a subscription that had it), after offering it:
// robotexec run -record records them. f must not keep m or block; nil
// stops it.
func (r *Router) TapInputs(f func(m *Message)) {
	if f == nil {
		r.tap.Store(nil)
		return
	}
	r.tap.Store(&f)
}

// Refuse counts a drop for reason on every subscription that m, which the
// remote received and refused, would have gone to; an echo of a local
// publication (m with its payload) counts only for the shared ones.
func (r *Router) Refuse(m *Message, reason Reason) {
	var buf [8]*Subscription
	subs := r.index.Match(m.Topic, buf[:0])
	echo := false
	if r.echo != nil && m.Payload != nil && len(subs) > 0 {
		_, echo = r.echo.match(m)
	}
	for _, s := range subs {
		if !echo || s.Shared() {
			s.Drop(reason)
		}
	}
}

// Fence tells the router that the remote has received everything the
// broker was to send it in answer to the publications it handed over
// before number seq (package subscribers/mqtt fences each new
// connection): the echoes still awaited of QoS 0 ones, and with clean of
// all of them (a clean session's broker forgets what it had not sent),
// will not come. The others' ages count again from now.
func (r *Router) Fence(seq uint64, clean bool) {
	if r.echo != nil {
		r.echo.fence(seq, clean)
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
