package waitset

// List is an intrusive FIFO of entities, used for run queues. It allocates
// nothing. An entity may be in one list (or the set's pending stack) at a
// time. The zero List is empty and ready to use; it is not safe for
// concurrent use.
type List struct {
	head, tail *Entity
	n          int
}

// Len returns the number of entities in the list.
func (l *List) Len() int { return l.n }

// Push appends e at the back.
func (l *List) Push(e *Entity) {
	e.next = nil
	if l.tail == nil {
		l.head = e
	} else {
		l.tail.next = e
	}
	l.tail = e
	l.n++
}

// Pop removes and returns the front entity, or nil if the list is empty.
func (l *List) Pop() *Entity {
	e := l.head
	if e == nil {
		return nil
	}
	l.head = e.next
	if l.head == nil {
		l.tail = nil
	}
	e.next = nil
	l.n--
	return e
}

// append moves every entity of o to the back of l, leaving o empty.
func (l *List) append(o *List) {
	if o.head == nil {
		return
	}
	if l.tail == nil {
		l.head = o.head
	} else {
		l.tail.next = o.head
	}
	l.tail = o.tail
	l.n += o.n
	*o = List{}
}
