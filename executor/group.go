package executor

import (
	"sync"
	"sync/atomic"

	"github.com/robotexec/robotexec/internal/regopt"
	"github.com/robotexec/robotexec/waitset"
)

// GroupKind says how the callbacks of a group may overlap.
type GroupKind uint8

const (
	// MutuallyExclusive groups run one callback at a time, like a
	// single-threaded executor inside the pool. It is the kind of every
	// owner's default group.
	MutuallyExclusive GroupKind = iota
	// Reentrant groups let different callbacks run at once; one callback
	// (one timer, one subscription) still never overlaps itself.
	Reentrant
)

// String returns "mutually_exclusive" or "reentrant".
func (k GroupKind) String() string {
	if k == Reentrant {
		return "reentrant"
	}
	return "mutually_exclusive"
}

// Group is a callback group. Callbacks of a mutually exclusive group never
// overlap; callbacks of different groups do.
//
// A mutually exclusive group is a serial executor (docs/design.md, Callback
// groups) on top of the worker pool: a worker that takes one of its
// callbacks queues it on the group and claims the group with an atomic
// increment; if another worker already holds the group, the claimer returns
// to the run queue at once, and the holder runs the queued callback after
// the ones ahead of it. No worker ever waits for a group.
type Group struct {
	name     string
	kind     GroupKind
	priority int // the least priority of its callbacks (see Priority)

	scheduled atomic.Int32 // callbacks queued on the group and not yet run
	mu        sync.Mutex
	q         waitset.List
}

// NewGroup returns a callback group. Groups may be shared by owners. Of
// opts, only Priority applies to a group: its callbacks run at least at
// that priority.
func (e *Executor) NewGroup(name string, kind GroupKind, opts ...Option) *Group {
	if name == "" {
		name = "group"
	}
	v := regopt.Apply(regopt.Values[*Group]{}, opts)
	return &Group{name: name, kind: kind, priority: max(v.Priority, 0)}
}

// Name returns the group's name.
func (g *Group) Name() string { return g.name }

// Kind returns the group's kind.
func (g *Group) Kind() GroupKind { return g.kind }
