package executor

import (
	"slices"
	"sync"

	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// resource is a named piece of state that callbacks may need exclusively, as
// a fusion callback needs both the odometry and the IMU state (a "cown" in
// docs/design.md, Resources). A callback registered with Needs runs only
// while it holds every resource it names.
//
// Acquisition follows docs/design.md, Resources. Resources are ordered (by
// creation); when a worker takes a callback from the run queue, its request
// is queued on its lowest resource; when the request reaches the head of a
// resource's queue it holds that resource and is forwarded to the next one;
// when it holds the highest, the callback runs. When the callback returns,
// the request leaves the head of every queue, and each request that reaches
// a head goes on: the releasing worker runs those that now hold all they
// need. No worker ever waits for a resource, requests of one resource are
// served in FIFO order, and ordered acquisition admits no deadlock.
type resource struct {
	name string
	id   uint64

	mu   sync.Mutex
	q    []*acquisition // the head holds the resource
	head int
}

// acquisition is a callback's request for its resources; each callback
// with resources has one, reused for every run.
type acquisition struct {
	x    *waitset.Entity
	res  []*resource // sorted by id, no repeats
	next int         // the resource the request is queued on (or about to be)
	done bool        // the request holds every resource
}

// resource returns the executor's resource named name, making it on first
// use. Resources are ordered by when they were made.
func (e *Executor) resource(name string) *resource {
	e.regMu.Lock()
	defer e.regMu.Unlock()
	if r := e.resources[name]; r != nil {
		return r
	}
	if e.resources == nil {
		e.resources = map[string]*resource{}
	}
	r := &resource{name: name, id: uint64(len(e.resources)) + 1}
	e.resources[name] = r
	return r
}

// Name returns the resource's name.
func (r *resource) Name() string { return r.name }

// ID returns the resource's place in the acquisition order, from 1.
func (r *resource) ID() uint64 { return r.id }

func newAcquisition(rs []*resource) *acquisition {
	if len(rs) == 0 {
		return nil
	}
	res := slices.Clone(rs)
	slices.SortFunc(res, func(a, b *resource) int { return int(a.id) - int(b.id) })
	res = slices.Compact(res)
	return &acquisition{res: res}
}

// acquire queues a's request on its lowest resource and forwards it as far
// as it goes; it reports whether the request holds every resource.
func (e *Executor) acquire(a *acquisition) bool {
	a.next = 0
	a.done = false
	return e.forward(a, false)
}

// forward queues a on a.res[a.next], or, with atHead, takes a.res[a.next]
// as held already, and goes on while a reaches the head of each queue.
func (e *Executor) forward(a *acquisition, atHead bool) bool {
	for {
		if atHead {
			a.next++
			if a.next == len(a.res) {
				a.done = true
				return true
			}
		}
		r := a.res[a.next]
		r.mu.Lock()
		r.q = append(r.q, a)
		atHead = len(r.q)-r.head == 1
		if e.obs != nil {
			e.obs.Observe(trace.Event{Op: trace.Request, ID: a.x.ID(), Timer: a.x.Kind() == waitset.Timer, Resource: r.id})
			if atHead {
				e.obs.Observe(trace.Event{Op: trace.Acquire, ID: a.x.ID(), Timer: a.x.Kind() == waitset.Timer, Resource: r.id})
			}
		}
		r.mu.Unlock()
		if !atHead {
			return false
		}
	}
}

// release takes a's request off every resource it holds. The requests that
// reach a head go on; those that now hold all they need are pushed on
// runnable, for the releasing worker to run.
func (e *Executor) release(a *acquisition, runnable *waitset.List) {
	a.done = false
	for _, r := range a.res {
		r.mu.Lock()
		if r.q[r.head] != a {
			r.mu.Unlock()
			panic("executor: resource " + r.name + " released by a request that does not hold it")
		}
		r.q[r.head] = nil
		r.head++
		var next *acquisition
		if r.head < len(r.q) {
			next = r.q[r.head]
		} else {
			r.q, r.head = r.q[:0], 0
		}
		if r.head > 64 && r.head*2 > len(r.q) {
			// Compact the queue now and then, so it does not grow.
			n := copy(r.q, r.q[r.head:])
			clear(r.q[n:])
			r.q, r.head = r.q[:n], 0
		}
		if e.obs != nil {
			e.obs.Observe(trace.Event{Op: trace.Release, ID: a.x.ID(), Timer: a.x.Kind() == waitset.Timer, Resource: r.id})
			if next != nil {
				e.obs.Observe(trace.Event{Op: trace.Acquire, ID: next.x.ID(), Timer: next.x.Kind() == waitset.Timer, Resource: r.id})
			}
		}
		r.mu.Unlock()
		if next != nil && e.forward(next, true) {
			runnable.Push(next.x)
		}
	}
}
