package bus

import (
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// A run that takes its messages one by one locks the queue once per
// message, and the publisher locks it once per message too: the two pass
// the queue's lock, and the cache line it shares with the queue's
// indexes, back and forth at every message, and each waits for the other
// while it copies a message in or out under the lock: the publisher,
// waiting for a worker's take, sets the pace.
//
// So a run claims the front messages it may serve in one short hold of
// the lock (TakeOrClaim), takes them without it (Claim.Next), and gives
// back in one more hold those it did not serve, claiming the next ones if
// the run goes on (Release): two holds of the lock per run, none spent
// copying. A queue that holds one message gives it to the run
// at once (TakeOrClaim, as TakeInto): one hold.
//
// A claimed message stays counted in the queue (Len, the depth, the
// threshold) until the run takes it, as before: the run counts its takes
// on a line of its own (Subscription.taken), which publishers read only at
// the depth or the threshold. A drop_oldest publisher at the depth drops
// the oldest message not taken, which may be claimed: it counts it taken
// (a compare-and-swap against the run's), and the run skips it.
// Publishers never write the claimed slots, so the run reads them
// unlocked.

// Take removes the front message; the executor calls it when the
// subscription's run starts. It returns the message and its sequence number
// in this subscription, whether there was one, and whether more remain.
func Take(s *Subscription) (m Message, seq uint64, ok, more bool) {
	seq, ok, more = TakeInto(s, &m)
	return m, seq, ok, more
}

// TakeInto is Take that stores the message in *m (left as it is when the
// queue is empty): the message is copied once, from the queue to m,
// where Take's result is copied again by its caller.
func TakeInto(s *Subscription, m *Message) (seq uint64, ok, more bool) {
	s.mu.Lock()
	return s.takeLocked(m)
}

// takeLocked is TakeInto with s.mu held, which it releases.
func (s *Subscription) takeLocked(m *Message) (seq uint64, ok, more bool) {
	if s.n == 0 {
		s.mu.Unlock()
		return 0, false, false
	}
	it := &s.ring[s.head]
	*m, seq = it.msg, s.frontSeq()
	at := it.at
	*it = item{}
	s.head = s.wrap(s.head + 1)
	s.n--
	more = s.n > 0
	if s.waiters.Load() > 0 && s.n <= s.opts.Depth/2 {
		// Blocked producers resume once the queue is half empty, not at
		// every free slot: one wake-up per half queue, not per message.
		s.space.Broadcast()
	}
	unmute := s.unmuteLocked()
	s.mu.Unlock()
	if at.a != nil {
		// Made out of the lock, which the publisher may be waiting for.
		m.Received = at.time()
	}
	for _, x := range unmute {
		x.Unmute()
	}
	return seq, true, more
}

// Claim is a run's hold on the front messages of a subscription's queue,
// from TakeOrClaim (or Release) until Release.
type Claim struct {
	s     *Subscription
	ring  []item // the ring the messages were claimed in
	start int    // the first's index in ring
	k     int    // how many were claimed
	next  int    // how many the run took or skipped
	seq   uint64 // the first's sequence number
}

// TakeOrClaim takes the front message into *m as TakeInto does when the
// queue holds one (or max is 1), and else claims up to max of its front
// messages for the caller, the subscription's only consumer, under one
// hold of the lock: a run that serves one message holds it once. It
// returns how many it claimed and whether more are queued behind them; s
// must have no claim outstanding.
func TakeOrClaim(s *Subscription, max int, c *Claim, m *Message) (seq uint64, took bool, k int, more bool) {
	s.mu.Lock()
	if s.n <= 1 || max == 1 {
		seq, took, more = s.takeLocked(m)
		return seq, took, 0, more
	}
	k, more = s.claimLocked(max, c)
	s.mu.Unlock()
	return 0, false, k, more
}

// claimLocked claims up to max front messages into c; s.mu must be held.
func (s *Subscription) claimLocked(max int, c *Claim) (k int, more bool) {
	k = min(s.n, max)
	s.claimed = k
	if k == 0 {
		*c = Claim{} // it holds no ring
		return 0, false
	}
	*c = Claim{s: s, ring: s.ring, start: s.head, k: k, seq: s.frontSeq()}
	s.claimSeq, s.claimRing = c.seq, &s.ring[0]
	s.head = s.wrap(s.head + k)
	s.n -= k
	s.taken.Store(0)
	return k, s.n > 0
}

// queued returns how many messages s's queue holds: queued, or claimed and
// not yet taken. s.mu must be held.
func (s *Subscription) queued() int {
	if s.claimed == 0 {
		return s.n
	}
	return s.n + s.claimed - int(s.taken.Load())
}

// holds reports whether s's queue holds limit messages or more (queued),
// reading the run's count of takes only when it may matter. s.mu must be
// held.
func (s *Subscription) holds(limit int) bool {
	return s.n+s.claimed >= limit && s.queued() >= limit
}

// Next takes c's next message into *m and returns its sequence number, or
// reports false once the run has taken (or a publisher dropped) every
// message of c.
func (c *Claim) Next(m *Message) (seq uint64, ok bool) {
	s := c.s
	for c.next < c.k {
		i := c.next
		if !s.taken.CompareAndSwap(int64(i), int64(i+1)) {
			// A drop_oldest publisher dropped messages from i on.
			c.skipTo(int(s.taken.Load()))
			continue
		}
		c.next = i + 1
		it := &c.ring[c.index(i)]
		*m = it.msg
		at := it.at
		*it = item{}
		if s.waiters.Load() > 0 {
			s.wakeProducers()
		}
		if at.a != nil {
			m.Received = at.time()
		}
		return c.seq + uint64(i), true
	}
	return 0, false
}

// index returns the ring index of c's message i.
func (c *Claim) index(i int) int {
	j := c.start + i
	if j >= len(c.ring) {
		j -= len(c.ring)
	}
	return j
}

// skipTo clears the slots of the messages publishers dropped from c, up to
// message to.
func (c *Claim) skipTo(to int) {
	for ; c.next < to; c.next++ {
		c.ring[c.index(c.next)] = item{}
	}
}

// wakeProducers wakes the Block producers waiting for room if the queue is
// half empty, as TakeInto does (see deliver for why the run's count comes
// before its look at the waiters).
func (s *Subscription) wakeProducers() {
	s.mu.Lock()
	if s.queued() <= s.opts.Depth/2 {
		s.space.Broadcast()
	}
	s.mu.Unlock()
}

// dropClaimed drops the oldest claimed message not taken, for a
// drop_oldest publisher at the depth, and reports whether there was one.
// s.mu must be held.
func (s *Subscription) dropClaimed() bool {
	for {
		t := s.taken.Load()
		if int(t) >= s.claimed {
			return false
		}
		if s.taken.CompareAndSwap(t, t+1) {
			s.drop(QueueFull, s.claimSeq+uint64(t))
			return true
		}
	}
}

// Release ends c: the messages its run took are gone from the queue, and
// the others go back to its front, in order. With want above 0 it then
// claims up to want more into c. It returns how many it
// claimed and whether messages are queued behind them.
func Release(s *Subscription, c *Claim, want int) (k int, more bool) {
	s.mu.Lock()
	if c.k > 0 {
		c.skipTo(int(s.taken.Load()))
		s.giveBack(c)
	}
	s.claimed, s.claimRing = 0, nil
	if s.waiters.Load() > 0 && s.n <= s.opts.Depth/2 {
		// As in TakeInto: blocked producers resume once the queue is
		// half empty.
		s.space.Broadcast()
	}
	unmute := s.unmuteLocked()
	if want > 0 {
		k, more = s.claimLocked(want, c)
	} else {
		*c = Claim{}
		more = s.n > 0
	}
	s.mu.Unlock()
	for _, x := range unmute {
		x.Unmute()
	}
	return k, more
}

// giveBack returns c's messages not taken to the front of the queue,
// where they were unless the ring grew meanwhile (a publication beyond the
// depth), which left them in the ring c claimed them in. s.mu must be
// held.
func (s *Subscription) giveBack(c *Claim) {
	r := c.k - c.next
	if r == 0 {
		return
	}
	s.head -= r
	if s.head < 0 {
		s.head += len(s.ring)
	}
	s.n += r
	if &c.ring[0] == &s.ring[0] {
		return
	}
	for i := range r {
		j := c.index(c.next + i)
		s.ring[s.wrap(s.head+i)] = c.ring[j]
		c.ring[j] = item{}
	}
}

// unmuteLocked returns the entities muted until s's queue drains below its
// threshold once it has, and forgets them. s.mu must be held.
func (s *Subscription) unmuteLocked() []*waitset.Entity {
	if len(s.mutees) == 0 || s.holds(s.opts.Threshold) {
		return nil
	}
	unmute := s.mutees
	s.mutees = nil
	if obs := s.ent.Set().Observer(); obs != nil {
		for _, x := range unmute {
			obs.Observe(trace.Event{Op: trace.Unmute, ID: x.ID(), Timer: x.Kind() == waitset.Timer, Overloaded: s.ID()})
		}
	}
	return unmute
}
