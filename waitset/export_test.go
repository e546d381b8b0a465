package waitset

// Append moves o's entities to the end of l, for the tests.
func (l *List) Append(o *List) { l.append(o) }

// Muted reports whether e is muted, for the tests.
func (e *Entity) Muted() bool { return e.muted() }

// Front returns the front entity without removing it, or nil.
func (l *List) Front() *Entity { return l.head }
