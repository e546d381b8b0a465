package bus

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// DefaultDepth is the queue depth of a subscription whose options give none.
const DefaultDepth = 10

// Options configure a subscription's queue.
type Options struct {
	// Depth is the number of messages the queue holds (the QoS depth);
	// 0 means DefaultDepth.
	Depth int
	// Overflow is what a full queue does; the zero value is DropOldest.
	Overflow Policy
	// Threshold is the queue length at which the subscription counts as
	// overloaded for the publications of callbacks' runs (see Run):
	// a callback that publishes to an overloaded subscription is muted
	// after its run until the queue drains below Threshold. 0 means Depth.
	Threshold int
}

// Stats counts what happened to a subscription's messages.
type Stats struct {
	Accepted uint64
	// Dropped counts drops by reason, indexed by Reason.
	Dropped [numReasons]uint64
	// Queued is the number of messages in the queue now.
	Queued int
}

// DroppedTotal returns the number of drops for every reason.
func (s Stats) DroppedTotal() uint64 {
	var n uint64
	for _, d := range s.Dropped {
		n += d
	}
	return n
}

// item is a queued message. Its sequence number is not stored: the ring
// holds the last n messages accepted, in order, so the front one's is
// seq-n+1.
type item struct {
	msg Message
	at  stamp // msg.Received, when msg has none yet (see stamp)
}

// Subscription is a topic filter with its own bounded FIFO message queue.
// It holds the wait set entity that the executor schedules (Entity).
//
// Its fields are laid out by cache line (see waitset.Entity): the queue
// that producers and the consumer share, then what changes rarely, which
// both read at every message, padded to whole lines, so that the
// subscription's size class keeps every subscription on line boundaries.
type Subscription struct {
	ent waitset.Entity // first: its lines are the subscription's first

	mu      sync.Mutex
	ring    []item
	head, n int
	seq     uint64 // messages accepted so far; the last one's sequence number
	claimed int    // messages claimed by the running consumer (see Claim)

	subRest
	_ [(64 - unsafe.Sizeof(subRest{})%64) % 64]byte

	// taken counts the messages of the outstanding claim that its run has
	// taken, or a drop_oldest publisher dropped (see Claim): the run's to
	// write, on a line of its own. claimSeq is the claim's first message's
	// sequence number, and claimRing the first slot of the ring it was
	// made in (nil with no claim): written under mu at the claim, read by
	// publishers only at the depth.
	taken     atomic.Int64
	claimSeq  uint64
	claimRing *item
	_         [40]byte
}

// subRest is the part of a Subscription that changes rarely.
type subRest struct {
	filter  string
	opts    Options
	closed  bool
	waiters atomic.Int32      // Block producers waiting for room; changed under mu
	mutees  []*waitset.Entity // entities muted until the queue drains below Threshold
	space   sync.Cond         // signaled when a Block producer may find room
	source  Source

	dropped [numReasons]atomic.Uint64
}

// New returns a subscription to filter with the given queue options. It is
// not registered with a wait set nor attached to a source; the executor does
// both.
func New(filter string, opts Options) (*Subscription, error) {
	s := new(Subscription)
	if err := Init(s, filter, opts); err != nil {
		return nil, err
	}
	return s, nil
}

// Init makes *s, a zero Subscription, a subscription as New does, for a
// Subscription allocated as part of another value.
func Init(s *Subscription, filter string, opts Options) error {
	if _, err := RouteFilter(filter); err != nil {
		return err
	}
	if opts.Depth < 0 {
		return fmt.Errorf("subscribers: subscription to %q: depth %d is negative", filter, opts.Depth)
	}
	if opts.Depth == 0 {
		opts.Depth = DefaultDepth
	}
	if opts.Threshold < 0 {
		return fmt.Errorf("subscribers: subscription to %q: threshold %d is negative", filter, opts.Threshold)
	}
	if opts.Threshold == 0 || opts.Threshold > opts.Depth {
		opts.Threshold = opts.Depth
	}
	s.subRest = subRest{filter: filter, opts: opts}
	s.ring = make([]item, opts.Depth)
	s.space.L = &s.mu
	return nil
}

// ID returns the subscription's ID: its callback's executor.Run.ID.
func (s *Subscription) ID() uint64 { return s.ent.ID() }

// Entity returns s's wait set entity, which the executor schedules.
func Entity(s *Subscription) *waitset.Entity { return &s.ent }

// Filter returns the subscription's topic filter.
func (s *Subscription) Filter() string { return s.filter }

// Shared reports whether the subscription is a shared one,
// $share/GROUP/FILTER: the broker gives each message of FILTER to one
// member of GROUP, maybe in another process.
func (s *Subscription) Shared() bool { return Shared(s.filter) }

// route returns the filter that topics match: the filter, or FILTER of
// $share/GROUP/FILTER. New checked it.
func (s *Subscription) route() string {
	if !s.Shared() {
		return s.filter
	}
	rest := s.filter[len(sharePrefix):]
	return rest[strings.IndexByte(rest, '/')+1:]
}

// Options returns the subscription's queue options, defaults applied.
func (s *Subscription) Options() Options { return s.opts }

// Deliver offers m to the queue. It applies the overflow policy when the
// queue is full, counts every drop, and triggers the subscription when it
// accepts m. It reports whether m was accepted. With the Block policy it
// waits for room; a closed subscription refuses every message. It panics if
// the subscription is not registered with a wait set.
func (s *Subscription) Deliver(m Message) bool {
	ok, _ := s.deliver(context.Background(), &m, stamp{})
	return ok
}

// deliver is Deliver of *m, which it copies into the queue, with at as its
// time stamp where m has none. Under the Block policy it waits for room
// until ctx is done, and then returns ctx's error.
func (s *Subscription) deliver(ctx context.Context, m *Message, at stamp) (bool, error) {
	if s.ent.Set() == nil {
		// Checked before locking: a nil dereference under the lock would
		// leave the subscription locked for good.
		panic("subscribers: Deliver to a subscription not registered with a wait set")
	}
	s.mu.Lock()
	if !s.closed && !s.holds(s.opts.Depth) {
		s.makeRoom()
		s.accept(m, at, false)
		s.mu.Unlock()
		return true, nil
	}
	return s.deliverFull(ctx, m, at)
}

// accept queues m, with at as its time stamp where it has none; s.mu must
// be held and there must be room in the ring.
func (s *Subscription) accept(m *Message, at stamp, quiet bool) {
	s.seq++
	// Stored field by field: a composite literal would be built, then
	// copied.
	it := &s.ring[s.wrap(s.head+s.n)]
	it.msg = *m
	it.at = at
	s.n++
	if canPrefetch && s.n+s.claimed < len(s.ring) {
		// For the next message (see prefetchSlot).
		prefetchSlot(unsafe.Pointer(&s.ring[s.wrap(s.head+s.n)]))
	}
	if obs := s.ent.Set().Observer(); obs != nil {
		obs.Observe(trace.Event{Op: trace.Accept, ID: s.ent.ID(), Seq: s.seq})
	}
	// Only a delivery to an empty queue changes the subscription's state
	// (DeliverDormant, docs/design.md, Order per subscription): with
	// messages queued, it is already in the wait set or will find them when
	// its run ends. Triggering under the lock orders it before a concurrent
	// Close, so that a drain after Close sees every accepted message.
	if s.n == 1 && s.claimed == 0 {
		if quiet {
			s.ent.Set().Fast().TriggerQuiet(&s.ent)
		} else {
			s.ent.Trigger()
		}
	}
}

// offer delivers *m without ever waiting, for a callback's run
// (backpressure, docs/design.md, Resources), and copies it into the queue:
// where Deliver would block (the Block policy, queue full), offer accepts
// m beyond the depth, and the executor mutes the publishing callback until
// the queue drains (see MuteUntilDrained). The drop policies drop as in
// Deliver. quiet triggers a dormant subscription without waking an idle
// worker, for a publishing worker that takes the work itself (hand-off).
// offer reports whether m was accepted and whether the queue is now at or
// above its threshold (overloaded).
func (s *Subscription) offer(m *Message, at stamp, quiet bool) (accepted, overloaded bool) {
	if s.ent.Set() == nil {
		panic("subscribers: publication to a subscription not registered with a wait set")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	atDepth := s.holds(s.opts.Depth)
	switch {
	case s.closed:
		s.drop(Closed, 0)
		return false, false
	case atDepth && s.opts.Overflow == DropNewest:
		s.drop(QueueFull, 0)
		return false, s.holds(s.opts.Threshold)
	case atDepth && s.opts.Overflow == DropOldest:
		s.dropOldestUntaken()
	}
	s.makeRoom()
	s.accept(m, at, quiet)
	return true, s.holds(s.opts.Threshold)
}

// Overloaded reports whether the queue is at or above its threshold.
func (s *Subscription) Overloaded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.holds(s.opts.Threshold)
}

// MuteUntilDrained mutes x, an entity whose run just published to s, until
// s's queue drains below its threshold, and reports true; if s is not
// overloaded any more, it does nothing and reports false. The executor
// calls it at the end of x's run (PostRun, docs/design.md, Resources).
func MuteUntilDrained(s *Subscription, x *waitset.Entity) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.holds(s.opts.Threshold) {
		return false
	}
	x.Mute()
	s.mutees = append(s.mutees, x)
	if obs := s.ent.Set().Observer(); obs != nil {
		obs.Observe(trace.Event{Op: trace.Mute, ID: x.ID(), Timer: x.Kind() == waitset.Timer, Overloaded: s.ID()})
	}
	return true
}

// Len returns the number of queued messages.
func (s *Subscription) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queued()
}

// Drop counts a message dropped for reason r outside the queue, for example
// one that failed to decode or came over a rate limit.
func (s *Subscription) Drop(r Reason) { s.drop(r, 0) }

func (s *Subscription) drop(r Reason, seq uint64) {
	s.dropped[r].Add(1)
	if set := s.ent.Set(); set != nil {
		if obs := set.Observer(); obs != nil {
			obs.Observe(trace.Event{Op: trace.Drop, ID: s.ent.ID(), Seq: seq, Reason: r.String()})
		}
	}
}

// Stats returns the subscription's counters.
func (s *Subscription) Stats() Stats {
	s.mu.Lock()
	st := Stats{Accepted: s.seq, Queued: s.queued()}
	s.mu.Unlock()
	for i := range s.dropped {
		st.Dropped[i] = s.dropped[i].Load()
	}
	return st
}

// Attach records the source the subscription is attached to, so that Close
// can detach it. Sources call it from their Attach method.
func (s *Subscription) Attach(src Source) {
	s.mu.Lock()
	s.source = src
	s.mu.Unlock()
}

// Closed reports whether the subscription refuses new messages.
func (s *Subscription) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close detaches the subscription from its source and refuses every later
// message (counted as dropped, reason Closed). Producers waiting under the
// Block policy return. Messages already accepted stay queued and still run.
// Close is idempotent.
func (s *Subscription) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	src := s.source
	s.source = nil
	s.space.Broadcast()
	s.mu.Unlock()
	if src != nil {
		src.Detach(s)
	}
}
