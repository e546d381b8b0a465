package subscribers

import (
	"bytes"
	"slices"
	"sync"
	"time"
)

// echoes are the publications of a router whose echo from the broker it
// awaits (see Router): per topic in publication order, for matching, and
// all of them oldest first, for giving up.
type echoes struct {
	max int
	age time.Duration

	mu      sync.Mutex
	topics  map[string][]*echo
	queue   []*echo // oldest first from head; done ones are skipped
	head    int
	awaited int

	matched, givenUp uint64
}

// echo is one awaited echo: the publication and the subscriptions that had
// it locally.
type echo struct {
	x       *echoes
	topic   string
	payload []byte
	qos     byte
	subs    []*Subscription
	seq     uint64    // the remote's number of its hand-over; sending until then
	at      time.Time // when it was handed over, or the last fence that kept it
	done    bool
}

// sending is the seq of an echo whose publication the remote has not
// handed over yet: neither a fence nor its age gives it up.
const sending = ^uint64(0)

func newEchoes(max int, age time.Duration) *echoes {
	return &echoes{max: max, age: age, topics: make(map[string][]*echo)}
}

// await records that the echo of *m, which subs had locally, is awaited,
// and returns the record, which the remote tells when it has handed the
// publication over (Sent).
func (x *echoes) await(m *Message, subs []*Subscription) *echo {
	e := &echo{x: x, topic: m.Topic, payload: m.Payload, qos: m.QoS, subs: slices.Clone(subs), seq: sending}
	x.mu.Lock()
	if x.awaited >= x.max {
		x.giveUpOldest()
	}
	if len(x.queue)-x.head >= 2*x.max {
		// Mostly echoes matched behind a late one at the head.
		x.queue = slices.DeleteFunc(x.queue[x.head:], func(e *echo) bool { return e.done })
		x.head = 0
	}
	x.queue = append(x.queue, e)
	x.topics[e.topic] = append(x.topics[e.topic], e)
	x.awaited++
	x.mu.Unlock()
	return e
}

// Sent records that the remote handed e's publication over as its
// hand-over number seq, from when its age counts, or forgets e when it
// failed.
func (e *echo) Sent(seq uint64, err error) {
	x := e.x
	x.mu.Lock()
	switch {
	case e.done:
	case err != nil:
		x.remove(e)
	default:
		e.seq, e.at = seq, now()
	}
	x.mu.Unlock()
}

// match reports whether m, received, is an awaited echo (the first of its
// topic with its payload), and if so returns the subscriptions that had
// it. It first gives up the echoes published more than the age before m
// arrived.
func (x *echoes) match(m *Message) ([]*Subscription, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.expire(m.Received)
	if m.Retained {
		// A retained message sent on subscribing; live deliveries carry
		// no retain flag.
		return nil, false
	}
	for _, e := range x.topics[m.Topic] {
		if bytes.Equal(e.payload, m.Payload) {
			subs := e.subs
			x.remove(e)
			x.matched++
			return subs, true
		}
	}
	return nil, false
}

// fence gives up the awaited echoes of QoS 0 publications handed over
// before seq, or with all every one of those; the others' ages count from
// now.
func (x *echoes) fence(seq uint64, all bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	t := now()
	for _, e := range x.queue[x.head:] {
		switch {
		case e.done || e.seq >= seq:
		case all || e.qos == 0:
			x.remove(e)
			x.givenUp++
		default:
			e.at = t
		}
	}
	x.compact()
}

// expire gives up the echoes handed over more than the age before t. One
// not handed over yet stops it: the queue is in publication order.
func (x *echoes) expire(t time.Time) {
	for x.head < len(x.queue) {
		e := x.queue[x.head]
		if !e.done {
			if e.seq == sending || t.Sub(e.at) <= x.age {
				break
			}
			x.remove(e)
			x.givenUp++
		}
		x.queue[x.head] = nil
		x.head++
	}
	x.compact()
}

// giveUpOldest gives up the oldest awaited echo.
func (x *echoes) giveUpOldest() {
	for x.head < len(x.queue) {
		e := x.queue[x.head]
		x.queue[x.head] = nil
		x.head++
		if !e.done {
			x.remove(e)
			x.givenUp++
			break
		}
	}
	x.compact()
}

// remove takes e, not done, out of its topic's list and marks it done; the
// queue drops it when it reaches the head.
func (x *echoes) remove(e *echo) {
	list := x.topics[e.topic]
	if i := slices.Index(list, e); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(x.topics, e.topic)
	} else {
		x.topics[e.topic] = list
	}
	e.done, e.payload, e.subs = true, nil, nil
	x.awaited--
}

// compact drops the done entries at the queue's head and reuses its front
// once half of it is spent.
func (x *echoes) compact() {
	for x.head < len(x.queue) && x.queue[x.head].done {
		x.queue[x.head] = nil
		x.head++
	}
	if x.head == len(x.queue) {
		x.queue, x.head = x.queue[:0], 0
		return
	}
	if x.head > len(x.queue)/2 {
		n := copy(x.queue, x.queue[x.head:])
		clear(x.queue[n:])
		x.queue, x.head = x.queue[:n], 0
	}
}

func (x *echoes) stats() EchoStats {
	x.mu.Lock()
	defer x.mu.Unlock()
	return EchoStats{Matched: x.matched, GivenUp: x.givenUp, Awaited: x.awaited}
}
