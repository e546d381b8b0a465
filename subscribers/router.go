package subscribers

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// RouterOptions configure a [Router]. The zero value is an in-process
// router: publications reach the attached subscriptions only.
type RouterOptions struct {
	// Remote carries publications beyond the process and brings in what
	// others publish. (optional) Defaults to none.
	Remote Remote
	// RemoteOnly sends every publication to the remote only, so that
	// subscriptions of this process get it back from the broker like
	// everyone else. (optional) Defaults to false: local first, the
	// matching subscriptions of this process get a publication directly.
	// Ignored without Remote.
	RemoteOnly bool
	// Audience, with a remote, says which publications anyone beyond the
	// process wants: the others stay in the process (retained ones
	// aside). (optional) Defaults to none: every publication goes to the
	// remote.
	Audience Audience
	// NoEcho says that the remote never sends the router's own
	// publications back to its non-shared subscriptions (the embedded
	// broker does this for its process's client). (optional) Defaults to
	// false: the router recognizes the echoes of its local deliveries in
	// what the remote receives and drops them (see [Router]).
	NoEcho bool
	// QoS is the QoS of subscriptions attached with [Router.Attach].
	// (optional) Defaults to 0.
	QoS byte
	// MaxEchoes bounds the publications whose echo the router waits for;
	// beyond it the oldest is given up. (optional) Defaults to
	// DefaultMaxEchoes.
	MaxEchoes int
	// EchoAge is how much later than a publication a received message
	// may be for the publication's echo still to be awaited. (optional)
	// Defaults to DefaultEchoAge.
	EchoAge time.Duration
	// MaxPayload, when positive, is the largest payload published: a
	// publication with a larger one is refused at once with ErrTooLarge,
	// reaching no subscription, local or remote, and counted
	// (Router.TooLarge). (optional) Defaults to 0: no limit.
	MaxPayload int
}

// ErrTooLarge is returned by a publication whose payload is over
// RouterOptions.MaxPayload.
var ErrTooLarge = errors.New("subscribers: payload over the maximum")

// Router is the one message path of a process: publications reach the
// matching subscriptions of this process directly, through their queues,
// and the [Remote] (the MQTT broker) for everyone else; what the remote
// receives goes to the matching subscriptions. Subscriptions are matched
// with MQTT topic filters; a shared subscription, $share/GROUP/FILTER, is
// matched with FILTER and, with a remote, gets only what the broker gives
// it (the broker splits FILTER's messages among GROUP, maybe across
// processes), never a local copy.
//
// Each subscription gets each message once. MQTT 3.1.1 has no "no local"
// option, so the broker sends the router's own publications back to the
// subscriptions that had them locally. With [RouterOptions.NoEcho] the
// broker is trusted not to; otherwise the router remembers, per topic, the
// publications whose echo it awaits, with the subscriptions that had them,
// and drops a received message's copies for those subscriptions when its
// payload equals that of an awaited publication of its topic (the first
// such, in publication order). An awaited echo that the broker will not
// send (a QoS 0 one when the connection was lost, any one when the session
// was clean; see [Router.Fence]) is given up, as is one still missing
// once the router receives messages EchoAge younger than its hand-over,
// or the oldest beyond MaxEchoes; the give-ups are counted
// ([Router.EchoStats]). Each subscription then gets each message exactly
// once as long as every awaited echo comes or is given up for one of
// those reasons; another publisher's message whose payload equals that of
// an echo still awaited on the same topic takes the echo's place, so
// that its publisher's order may appear changed among equal payloads.
//
// A subscription attached while echoes are matched gets no local copies
// until the broker has confirmed its subscription, and never an echo of a
// publication made before it attached (the broker would not have sent it
// such a message either): each publisher's order holds for it too.
//
// An in-process router keeps a retained message per topic and delivers it
// to subscriptions attached later. With a remote the broker keeps them;
// a router whose remote sends none of its own publications back gets its
// own from its audience ([RetainKeeper]). Live deliveries carry no retain
// flag, as in MQTT.
//
// The zero Router is an in-process router, ready to use.
type Router struct {
	index  Index
	remote Remote
	opts   RouterOptions
	echo   *echoes // nil unless echoes are matched

	// subMu serializes the remote's subscriptions, which wait for the
	// broker.
	subMu    sync.Mutex
	mu       sync.Mutex
	filters  map[string]*wireFilter     // with a remote: filters in use
	attached map[*Subscription]struct{} // with a remote
	retained map[string]Message         // without a remote

	// unsure holds, while echoes are matched, the subscriptions attached
	// whose subscription the broker has not confirmed yet: publications
	// skip them, since the broker may or may not send them the echo.
	unsure sync.Map // *Subscription → struct{}

	tooLarge atomic.Uint64 // publications refused for their size
	tap      atomic.Pointer[func(*Message)]
}

// wireFilter is a filter subscribed at the remote: the number of attached
// subscriptions that use it and the highest QoS they asked for.
type wireFilter struct {
	n   int
	qos byte
}

// Defaults of RouterOptions' fields.
const (
	DefaultMaxEchoes = 65536
	DefaultEchoAge   = 10 * time.Second
)

// NewRouter returns a router as opts say.
func NewRouter(opts RouterOptions) *Router {
	if opts.MaxEchoes <= 0 {
		opts.MaxEchoes = DefaultMaxEchoes
	}
	if opts.EchoAge <= 0 {
		opts.EchoAge = DefaultEchoAge
	}
	r := &Router{remote: opts.Remote, opts: opts}
	if r.remote != nil {
		r.filters = make(map[string]*wireFilter)
		r.attached = make(map[*Subscription]struct{})
		if !opts.NoEcho && !opts.RemoteOnly {
			r.echo = newEchoes(opts.MaxEchoes, opts.EchoAge)
		}
	}
	return r
}

// local reports whether publications reach local subscriptions directly.
func (r *Router) local() bool { return r.remote == nil || !r.opts.RemoteOnly }

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
	f := s.Filter()
	r.mu.Lock()
	delete(r.attached, s)
	w := r.filters[f]
	w.n--
	unused := w.n == 0
	if unused {
		delete(r.filters, f)
	}
	r.mu.Unlock()
	if unused {
		r.remote.Unsubscribe(f)
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
	f := s.Filter()
	r.mu.Lock()
	if _, ok := r.attached[s]; ok {
		r.mu.Unlock()
		return fmt.Errorf("subscribers: subscribe %q: subscription already attached", f)
	}
	r.attached[s] = struct{}{}
	w := r.filters[f]
	if w == nil {
		w = &wireFilter{}
		r.filters[f] = w
	}
	w.n++
	w.qos = max(w.qos, qos)
	qos = w.qos
	if r.echo != nil {
		r.unsure.Store(s, struct{}{})
	}
	r.index.Add(s)
	r.mu.Unlock()
	r.deliverRetained(s, r.ownRetained(s))
	err := r.remote.Subscribe(f, qos)
	if r.echo != nil {
		r.unsure.Delete(s)
		r.index.touch() // publishers look again
	}
	if err != nil {
		r.Detach(s)
		return err
	}
	return nil
}

// ownRetained returns the retained messages of the router's own
// publications that s matches and that the broker keeps but does not send
// back (no local): the Audience knows them (see OwnRetained).
func (r *Router) ownRetained(s *Subscription) []Message {
	k, ok := r.opts.Audience.(RetainKeeper)
	if !ok || !r.opts.NoEcho || s.Shared() {
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

func (r *Router) deliverRetained(s *Subscription, ms []Message) {
	for i := range ms {
		s.deliver(&ms[i])
	}
}

// Publish publishes m on m.Topic: see [Publisher.PublishMessage]. Use a
// [Publisher] to spare the topic lookup.
func (r *Router) Publish(m Message) (int, error) {
	if err := ValidateTopic(m.Topic); err != nil {
		return 0, err
	}
	var buf [8]*Subscription
	var subs []*Subscription
	if r.local() {
		subs = r.localMatch(m.Topic, buf[:0])
	}
	return r.publish(&m, subs, r.wanted(m.Topic), nil)
}

// wanted reports whether the remote is to get the publications on topic:
// with a remote, unless the router is local first and its audience says
// nobody beyond the process wants them.
func (r *Router) wanted(topic string) bool {
	if r.remote == nil {
		return false
	}
	if a := r.opts.Audience; a != nil && r.local() {
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
	return slices.DeleteFunc(dst, func(s *Subscription) bool {
		if s.Shared() {
			return true
		}
		_, unsure := r.unsure.Load(s)
		return unsure
	})
}

// publish delivers *m to subs, the local subscriptions it reaches, and
// sends it to the remote when out is set. With offer set, subscriptions
// take it through offer, which never waits. It returns how many
// subscriptions accepted it and the remote's error.
func (r *Router) publish(m *Message, subs []*Subscription, out bool, offer *offering) (int, error) {
	if max := r.opts.MaxPayload; max > 0 && len(m.Payload) > max {
		r.tooLarge.Add(1)
		return 0, fmt.Errorf("%w: publish %q: %d bytes, over %d", ErrTooLarge, m.Topic, len(m.Payload), max)
	}
	if m.Received.IsZero() {
		m.Received = now()
	}
	if m.Retained {
		return r.publishRetained(m, subs, offer)
	}
	n := offer.deliver(m, subs)
	if !out {
		return n, nil
	}
	return n, r.send(m, subs)
}

// publishRetained is publish of a retained message, which the remote
// always gets: the broker keeps it for later subscribers.
func (r *Router) publishRetained(m *Message, subs []*Subscription, offer *offering) (int, error) {
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
	n := offer.deliver(&live, subs)
	if r.remote == nil {
		return n, nil
	}
	return n, r.send(m, subs)
}

// TooLarge counts the publications refused for a payload over
// RouterOptions.MaxPayload.
func (r *Router) TooLarge() uint64 { return r.tooLarge.Load() }

// send hands *m to the remote, awaiting its echo when subs, the local
// subscriptions that had it, are to get it from the remote too.
func (r *Router) send(m *Message, subs []*Subscription) error {
	if r.echo == nil || len(subs) == 0 {
		return r.remote.Publish(*m, nil)
	}
	e := r.echo.await(m, subs)
	err := r.remote.Publish(*m, e)
	if err != nil {
		e.Sent(0, err)
	}
	return err
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
