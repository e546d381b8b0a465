package bus

// The queue's ring: where its messages sit, and how it drops the oldest
// and grows.

// dropOldestUntaken drops the oldest message not taken, claimed (see
// Claim) or queued, to make room; s.mu must be held.
func (s *Subscription) dropOldestUntaken() {
	if s.claimed > 0 {
		if s.dropClaimed() {
			return
		}
		if s.claimRing == &s.ring[0] {
			// The claim's slots lie right behind the front; dropping the
			// front would free a slot between them and the queue, and the
			// queue, going round, would reach the claim before its run
			// releases it. The queue moves to a ring of its own.
			s.moveRing(len(s.ring))
		}
	}
	s.dropOldest()
}

// dropOldest drops the front message of the queue behind any claim; s.mu
// must be held.
func (s *Subscription) dropOldest() {
	seq := s.frontSeq()
	s.ring[s.head] = item{}
	s.head = s.wrap(s.head + 1)
	s.n--
	s.drop(QueueFull, seq)
}

// frontSeq returns the sequence number of the front message; s.mu must be
// held and the queue must not be empty.
func (s *Subscription) frontSeq() uint64 { return s.seq - uint64(s.n) + 1 }

// wrap returns ring index i, at most twice the ring's length, modulo the
// length: a comparison where % would divide, on every message.
func (s *Subscription) wrap(i int) int {
	if i >= len(s.ring) {
		i -= len(s.ring)
	}
	return i
}

// makeRoom grows the ring if the queue and the outstanding claim fill it:
// beyond the depth (a run's publication), or with messages dropped
// from the claim, which keep their slots until its run releases it. s.mu
// must be held.
func (s *Subscription) makeRoom() {
	if s.n+s.claimed == len(s.ring) {
		s.grow()
	}
}

// grow doubles the ring, for a run's publication beyond the depth, or for messages
// dropped from a claim (see Claim). The claimed slots stay in the old ring,
// for the claim's run to read.
func (s *Subscription) grow() { s.moveRing(2 * len(s.ring)) }

// moveRing moves the queue to a new ring of size slots, leaving any claimed
// slots in the old one.
func (s *Subscription) moveRing(size int) {
	ring := make([]item, size)
	for i := range s.n {
		ring[i] = s.ring[(s.head+i)%len(s.ring)]
	}
	s.ring, s.head = ring, 0
}
