package subscribers

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Bus is the in-process source: publishers and subscriptions of one process
// exchange messages through it, matched with MQTT topic filters. A retained
// message is kept per topic and delivered to subscriptions attached later, as
// an MQTT broker does. The zero Bus is ready to use.
type Bus struct {
	router Router

	mu       sync.Mutex
	retained map[string]Message
}

// NewBus returns an empty bus.
func NewBus() *Bus { return &Bus{} }

// Attach starts delivering to s the messages whose topic matches its filter,
// beginning with the retained ones.
func (b *Bus) Attach(s *Subscription) error {
	s.Attach(b)
	b.mu.Lock()
	b.router.Add(s)
	var retained []Message
	for topic, m := range b.retained {
		if Match(s.filter, topic) {
			retained = append(retained, m)
		}
	}
	b.mu.Unlock()
	for _, m := range retained {
		s.Deliver(m)
	}
	return nil
}

// Detach stops delivering to s.
func (b *Bus) Detach(s *Subscription) { b.router.Remove(s) }

// Publish delivers m to every matching subscription and returns how many
// accepted it. m.Received is set to now if zero. A retained message with an
// empty payload clears the topic's retained message. Publish allocates
// nothing for a topic with no retained message; use a [Publisher] to also
// skip the topic lookup.
func (b *Bus) Publish(m Message) (int, error) {
	if err := ValidateTopic(m.Topic); err != nil {
		return 0, err
	}
	var buf [8]*Subscription
	if m.Retained {
		b.mu.Lock()
		subs := b.router.Match(m.Topic, buf[:0])
		m = b.retain(m)
		b.mu.Unlock()
		m.Retained = false // as in MQTT: live deliveries carry no retain flag
		return b.deliver(&m, subs), nil
	}
	return b.deliver(&m, b.router.Match(m.Topic, buf[:0])), nil
}

// deliver delivers *m to subs, stamping it first if it has no time; it
// takes a pointer, so that the message is copied once, into each queue.
func (b *Bus) deliver(m *Message, subs []*Subscription) int {
	if m.Received.IsZero() {
		m.Received = now()
	}
	n := 0
	for _, s := range subs {
		if s.deliver(m) {
			n++
		}
	}
	return n
}

// retain stamps m, stores it as its topic's retained message (an empty
// payload clears it instead) and returns it; b.mu must be held. Publishers
// match the subscriptions of a retained message under b.mu too: Attach holds
// it while it adds a subscription and collects the retained messages, so a
// subscription attaching meanwhile gets the message exactly once, live if
// Attach came first, retained if not.
func (b *Bus) retain(m Message) Message {
	if m.Received.IsZero() {
		m.Received = now()
	}
	if len(m.Payload) == 0 {
		delete(b.retained, m.Topic)
		return m
	}
	if b.retained == nil {
		b.retained = make(map[string]Message)
	}
	b.retained[m.Topic] = m
	return m
}

// Publisher returns a publisher on topic, which must be a valid topic name.
func (b *Bus) Publisher(topic string) (*Publisher, error) {
	if err := ValidateTopic(topic); err != nil {
		return nil, err
	}
	return &Publisher{bus: b, topic: topic}, nil
}

// Publisher publishes on one topic of a bus. It remembers which
// subscriptions match its topic until the bus's subscriptions change, so a
// publication costs no lookup and no allocation.
type Publisher struct {
	bus   *Bus
	topic string
	cache atomic.Pointer[pubCache]
}

type pubCache struct {
	gen  uint64
	subs []*Subscription
}

// Topic returns the publisher's topic.
func (p *Publisher) Topic() string { return p.topic }

// Publish publishes payload with QoS 0, not retained, and returns how many
// subscriptions accepted it.
func (p *Publisher) Publish(payload []byte) int {
	return p.PublishMessage(Message{Payload: payload})
}

// PublishMessage publishes m on the publisher's topic (m.Topic is set to
// it) and returns how many subscriptions accepted it.
func (p *Publisher) PublishMessage(m Message) int {
	m.Topic = p.topic
	if m.Retained {
		b := p.bus
		b.mu.Lock()
		subs := p.subscribers()
		m = b.retain(m)
		b.mu.Unlock()
		m.Retained = false // as in MQTT: live deliveries carry no retain flag
		return b.deliver(&m, subs)
	}
	return p.bus.deliver(&m, p.subscribers())
}

// Offer publishes m like PublishMessage, but through Subscription.Offer:
// it never waits, and calls overloaded for each subscription it leaves at
// or above its threshold. quiet triggers dormant subscriptions without
// waking an idle worker. It returns how many subscriptions accepted m.
// The executor's in-process publishers use it from callbacks.
func (p *Publisher) Offer(m Message, quiet bool, overloaded func(*Subscription)) int {
	m.Topic = p.topic
	if m.Received.IsZero() {
		m.Received = now()
	}
	if m.Retained {
		b := p.bus
		b.mu.Lock()
		subs := p.subscribers()
		m = b.retain(m)
		b.mu.Unlock()
		m.Retained = false
		return offer(&m, subs, quiet, overloaded)
	}
	return offer(&m, p.subscribers(), quiet, overloaded)
}

func offer(m *Message, subs []*Subscription, quiet bool, overloaded func(*Subscription)) int {
	n := 0
	for _, s := range subs {
		accepted, over := s.offer(m, quiet)
		if accepted {
			n++
		}
		if over && overloaded != nil {
			overloaded(s)
		}
	}
	return n
}

func (p *Publisher) subscribers() []*Subscription {
	gen := p.bus.router.Generation()
	if c := p.cache.Load(); c != nil && c.gen == gen {
		return c.subs
	}
	c := &pubCache{gen: gen, subs: p.bus.router.Match(p.topic, nil)}
	p.cache.Store(c)
	return c.subs
}

// String describes the publisher.
func (p *Publisher) String() string { return fmt.Sprintf("publisher(%s)", p.topic) }

// anchor is a recent time.Now; now adds the monotonic time elapsed since.
var anchor atomic.Pointer[time.Time]

func init() {
	t := time.Now()
	anchor.Store(&t)
}

// reanchor bounds how far now's wall clock may lag a step of the system
// clock (an NTP correction, say).
const reanchor = 100 * time.Millisecond

// now returns the current time for stamping messages. It reads only the
// monotonic clock (time.Now reads the wall clock too, and the bus stamps
// every message), adding the elapsed time to an anchor taken with time.Now
// at most reanchor ago; its monotonic reading is exact, its wall clock
// follows a step of the system clock within reanchor.
func now() time.Time {
	a := anchor.Load()
	d := time.Since(*a)
	if d >= reanchor {
		t := time.Now()
		anchor.Store(&t)
		return t
	}
	return a.Add(d)
}
