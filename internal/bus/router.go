package bus

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
)

// RouterOptions configure a [Router]. The zero value is an in-process
// router: publications reach the attached subscriptions only.
type RouterOptions struct {
	// Remote carries publications beyond the process and brings in what
	// others publish. (optional) Defaults to none.
	Remote Remote
	// InProcess makes a publication reach the matching subscriptions of
	// this process directly, and the remote is asked not to send it back
	// (No Local); config's executor.in_process. (optional) Defaults to
	// false: every publication goes to the remote only, and subscriptions
	// of this process get it back from the broker like everyone else.
	// Without Remote, publications are always in-process.
	InProcess bool
	// Audience, with a remote, says which publications anyone beyond the
	// process wants: the others stay in the process (retained ones
	// aside). (optional) Defaults to none: every publication goes to the
	// remote.
	Audience Audience
	// QoS is the QoS of subscriptions attached with [Router.Attach].
	// (optional) Defaults to 0.
	QoS byte
	// MaxPayload, when positive, is the largest payload published: a
	// publication with a larger one is refused at once with ErrTooLarge,
	// reaching no subscription, local or remote, and counted
	// (Router.TooLarge). (optional) Defaults to 0: no limit.
	MaxPayload int
}

// ErrUnregistered is returned by a router's Attach of a subscription that
// is not registered with a wait set (an executor's Subscribe registers
// it): nothing would run its callback.
var ErrUnregistered = errors.New("the subscription is not registered with a wait set")

// ErrTooLarge is returned by a publication whose payload is over
// RouterOptions.MaxPayload.
var ErrTooLarge = errors.New("subscribers: payload over the maximum")

// Router is the one message path of a process: publications reach the
// matching subscriptions of this process directly, through their queues,
// and the [Remote] (the MQTT broker) for everyone else; what the remote
// receives goes to the subscriptions it was sent for. Subscriptions are
// matched with MQTT topic filters; a shared subscription,
// $share/GROUP/FILTER, is matched with FILTER and, with a remote, gets
// only what the broker gives it (the broker splits FILTER's messages
// among GROUP, maybe across processes), never a local copy.
//
// Each subscription gets each message once, and nothing is inferred: the
// router tells the broker what it needs (see [WireFilter]). In-process,
// every non-shared filter is subscribed with No Local, so that the broker
// never sends the router's own publications back. Each filter has a
// subscription identifier, and a received message that carries
// identifiers goes to the subscriptions of those filters only, so that a
// broker that sends one copy per matching subscription (mosquitto) and
// one that sends one copy for all of them (mochi) both deliver each
// message once to each subscription. Without identifiers (MQTT 3.1.1) a
// message goes to every subscription whose filter matches its topic.
//
// Retained messages: each subscription gets the retained value of a
// topic once, then live copies (without the retain flag, as in MQTT). The
// broker sends the retained messages of a filter at each SUBSCRIBE (when
// a subscription attaches, and on each new connection, since they may
// have changed meanwhile); the router remembers the last value each
// subscription had on each retained topic and drops a retained copy that
// brings nothing new (see [Renewed]). An in-process router keeps
// a retained message per topic and delivers it to subscriptions attached
// later. A broker that applies No Local to retained messages too (the
// embedded broker) does not send the router's own; an [Audience] that is
// a [RetainKeeper] supplies them.
//
// The zero Router is an in-process router, ready to use.
type Router struct {
	index  Index
	remote Remote
	opts   RouterOptions

	// subMu serializes the remote's subscriptions, which wait for the
	// broker.
	subMu    sync.Mutex
	mu       sync.Mutex
	filters  map[string]*wireFilter    // with a remote: filters in use
	slots    map[uint32]*wireFilter    // with a remote: the same, by identifier slot
	attaches map[string]uint32         // with a remote: attachments so far, by filter
	attached map[*Subscription]*joined // with a remote
	retained map[string]Message        // without a remote
	seed     maphash.Seed              // of the retained values' hashes
	tracked  atomic.Int64              // retained values recorded, all subscriptions

	tooLarge atomic.Uint64 // publications refused for their size
	tap      atomic.Pointer[func(*Message)]
}

// wireFilter is a filter subscribed at the remote: its identifiers' slot
// (see ids.go), the attached subscriptions that use it and the highest
// QoS they asked for.
type wireFilter struct {
	filter string
	route  string // what topics match: filter, or FILTER of a shared one
	slot   uint32
	id     uint32 // the last one subscribed with
	qos    byte
	subs   []*Subscription
}

// joined is what the router keeps of an attached subscription: the
// identifier it was subscribed with, its filter's at the last renewal,
// and a hash of the last value it had on each retained topic (see
// retainedvalues.go).
type joined struct {
	id, renewed uint32
	seen        map[string]uint64
}

// NewRouter returns a router as opts say.
func NewRouter(opts RouterOptions) *Router {
	r := &Router{remote: opts.Remote, opts: opts, seed: maphash.MakeSeed()}
	if r.remote != nil {
		r.filters = make(map[string]*wireFilter)
		r.slots = make(map[uint32]*wireFilter)
		r.attaches = make(map[string]uint32)
		r.attached = make(map[*Subscription]*joined)
	}
	return r
}

// local reports whether publications reach local subscriptions directly.
func (r *Router) inProcess() bool { return r.remote == nil || r.opts.InProcess }

// keepsRetained reports whether the router keeps retained messages for
// subscriptions attached later (see Router): without a remote. With one,
// the broker keeps them.
func (r *Router) keepsRetained() bool { return r.remote == nil }

// Attach starts delivering to s the messages whose topic matches its
// filter, beginning with the retained ones, with the router's QoS at the
// remote. See [Router.QoS] for another QoS.
func (r *Router) Attach(s *Subscription) error { return r.attach(s, r.opts.QoS, r) }

// Detach stops delivering to s.
func (r *Router) Detach(s *Subscription) {
	if !r.index.Remove(s) || r.remote == nil {
		return
	}
	r.mu.Lock()
	r.forget(r.attached[s])
	delete(r.attached, s)
	w := r.filters[s.Filter()]
	w.subs = removed(w.subs, s)
	unused := len(w.subs) == 0
	if unused {
		delete(r.filters, w.filter)
		delete(r.slots, w.slot)
	}
	r.mu.Unlock()
	if unused {
		r.remote.Unsubscribe(w.filter)
	}
}

// QoS returns a source that attaches subscriptions to the router with QoS
// q at the remote instead of the router's default.
func (r *Router) QoS(q byte) Source { return qosSource{r: r, qos: q} }

type qosSource struct {
	r   *Router
	qos byte
}

func (v qosSource) Attach(s *Subscription) error { return v.r.attach(s, v.qos, v) }
func (v qosSource) Detach(s *Subscription)       { v.r.Detach(s) }

func (r *Router) attach(s *Subscription, qos byte, src Source) error {
	if qos > 2 {
		return fmt.Errorf("subscribers: subscribe %q: QoS %d is not 0, 1 or 2", s.Filter(), qos)
	}
	if s.ent.Set() == nil {
		// Refused here rather than found by the first delivery, which
		// would panic in the goroutine that delivers (an MQTT client's).
		return fmt.Errorf("subscribers: subscribe %q: %w", s.Filter(), ErrUnregistered)
	}
	s.Attach(src)
	if r.remote == nil {
		r.mu.Lock()
		r.index.Add(s)
		retained := r.retainedFor(s)
		r.mu.Unlock()
		r.deliverRetained(s, retained)
		return nil
	}
	r.subMu.Lock()
	defer r.subMu.Unlock()
	wf, err := r.join(s, qos)
	if err != nil {
		return err
	}
	r.deliverRetained(s, r.ownRetained(s))
	// Subscribed again at each attach: the broker sends the filter's
	// retained messages, which the new subscription needs (see Router).
	if err := r.remote.Subscribe(wf); err != nil {
		r.Detach(s)
		return err
	}
	return nil
}

// join records s as attached, under its filter's wire subscription, and
// returns what to subscribe at the remote.
func (r *Router) join(s *Subscription, qos byte) (WireFilter, error) {
	f := s.Filter()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.attached[s]; ok {
		return WireFilter{}, fmt.Errorf("subscribers: subscribe %q: subscription already attached", f)
	}
	w := r.filters[f]
	if w == nil {
		w = &wireFilter{filter: f, route: s.route(), slot: r.freeSlot(f)}
		r.filters[f] = w
		r.slots[w.slot] = w
	}
	w.id = r.nextID(w)
	r.attached[s] = &joined{id: w.id}
	w.subs = append(w.subs, s)
	w.qos = max(w.qos, qos)
	r.index.Add(s)
	return WireFilter{Filter: f, QoS: w.qos, ID: w.id, NoLocal: r.inProcess() && !s.Shared()}, nil
}

// removed returns subs without s, its freed slot cleared.
func removed(subs []*Subscription, s *Subscription) []*Subscription {
	if i := slices.Index(subs, s); i >= 0 {
		subs = slices.Delete(subs, i, i+1)
	}
	return subs
}

// Publish publishes m on m.Topic: see [Publisher.PublishMessage]. Use a
// [Publisher] to spare the topic lookup.
func (r *Router) Publish(ctx context.Context, m Message) (int, error) {
	if err := ValidateTopic(m.Topic); err != nil {
		return 0, err
	}
	var buf [8]*Subscription
	var subs []*Subscription
	if r.inProcess() {
		subs = r.localMatch(m.Topic, buf[:0])
	}
	return r.publish(ctx, RunOf(ctx), &m, subs, r.wanted(m.Topic))
}

// wanted reports whether the remote is to get the publications on topic:
// with a remote, unless the router is in-process and its audience says
// nobody beyond the process wants them.
func (r *Router) wanted(topic string) bool {
	if r.remote == nil {
		return false
	}
	if a := r.opts.Audience; a != nil && r.inProcess() {
		return a.Wanted(topic)
	}
	return true
}

// localMatch appends the subscriptions that a publication on topic reaches
// directly: the non-shared ones with a remote, which splits the shared
// ones' messages.
func (r *Router) localMatch(topic string, dst []*Subscription) []*Subscription {
	dst = r.index.Match(topic, dst)
	if r.remote == nil {
		return dst
	}
	return slices.DeleteFunc(dst, (*Subscription).Shared)
}

// publish delivers *m to subs, the local subscriptions it reaches, and
// sends it to the remote when out is set: under a run's context (run,
// which is RunOf(ctx); see Run) as the run's publication, which never
// waits, and under any other as Publisher.PublishMessage says. It returns
// how many subscriptions accepted it and the error of ctx or of the
// remote.
func (r *Router) publish(ctx context.Context, run *Run, m *Message, subs []*Subscription, out bool) (int, error) {
	if run != nil {
		if err := run.enter(); err != nil {
			return 0, err
		}
		defer run.leave()
	}
	if run != ctx {
		// A derived context may be done before its run ends.
		if err := ctx.Err(); err != nil {
			return 0, err
		}
	}
	offer := offering{run: run, ctx: ctx}
	if err := r.checkSize(m); err != nil {
		return 0, err
	}
	var at stamp
	if m.Received.IsZero() {
		if m.Retained || out {
			m.Received = now()
		} else {
			// Only this process's subscriptions get it: their workers
			// make the time (see stamp).
			at = readStamp()
		}
	}
	if m.Retained {
		return r.publishRetained(m, subs, offer)
	}
	n, err := offer.deliver(m, at, subs)
	if err != nil {
		return n, err
	}
	r.noteDelivered(m, subs)
	if !out {
		return n, nil
	}
	return n, r.remote.Publish(*m)
}

// publishOne is publish of a message that is not retained, under a
// context of no run, to subs, which hold one local subscription, and to
// nothing else: an in-process topic's common case, which the general
// path's loops and choices would slow by a third.
func (r *Router) publishOne(ctx context.Context, m *Message, subs []*Subscription) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := r.checkSize(m); err != nil {
		return 0, err
	}
	var at stamp
	if m.Received.IsZero() {
		at = readStamp() // only this process gets it (see publish)
	}
	ok, err := subs[0].deliver(ctx, m, at)
	if !ok {
		return 0, err
	}
	r.noteDelivered(m, subs)
	return 1, nil
}

// checkSize refuses a payload over RouterOptions.MaxPayload.
func (r *Router) checkSize(m *Message) error {
	if max := r.opts.MaxPayload; max > 0 && len(m.Payload) > max {
		return r.refuseSize(m)
	}
	return nil
}

// refuseSize counts and reports m's refusal for its size: kept apart, so
// that checkSize is inlined.
func (r *Router) refuseSize(m *Message) error {
	r.tooLarge.Add(1)
	return fmt.Errorf("%w: publish %q: %d bytes, over %d", ErrTooLarge, m.Topic, len(m.Payload), r.opts.MaxPayload)
}

// TooLarge counts the publications refused for a payload over
// RouterOptions.MaxPayload.
func (r *Router) TooLarge() uint64 { return r.tooLarge.Load() }

// QoSDefault returns the QoS the router's subscriptions are attached at
// (RouterOptions.QoS).
func (r *Router) QoSDefault() byte { return r.opts.QoS }
