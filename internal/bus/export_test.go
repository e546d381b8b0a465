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
