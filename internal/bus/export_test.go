package bus

// NodeCount returns the number of nodes in the index's tree, the root
// included. It exists for tests, which use it to see that Remove prunes the
// nodes it leaves empty.
func (r *Index) NodeCount() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.root.count()
}

func (n *rnode) count() int {
	c := 1
	for _, child := range n.children {
		c += child.count()
	}
	if n.plus != nil {
		c += n.plus.count()
	}
	return c
}

// ClaimFront claims up to max front messages of s into c, as TakeOrClaim
// does with more than one queued, whatever the queue holds: the claim
// tests claim exact counts.
func ClaimFront(s *Subscription, max int, c *Claim) (k int, more bool) {
	s.mu.Lock()
	k, more = s.claimLocked(max, c)
	s.mu.Unlock()
	return k, more
}
