package bus

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Run is the context of one run of a callback: the executor makes one for
// each run and passes it to the callback, as net/http passes a request's
// context to its handler. (A run is one call of a timer's callback, or one
// or more calls of a subscription's callback for the messages at the front
// of its queue, in order, with nothing between them.) A publication under
// it (the Run itself, or a context derived from it) is the run's: it never
// waits for room in a local subscription's queue, it reports the
// subscriptions it leaves overloaded to the run (the executor mutes the
// callback after the run, docs/design.md, Resources), and, where the scope
// allows hand-off, it triggers dormant subscriptions quietly, for the
// run's worker to take when the run ends.
//
// A Run is done when its run ends (Err is context.Canceled) or when its
// scope's Stop is done first (Err is context.DeadlineExceeded: the
// executor's drain deadline passed). A publication under a done Run is
// refused with its Err, so a goroutine that keeps a run's context past the
// run cannot publish as the run.
//
// A Run is 16 bytes, made once per run: what all the runs of an executor
// share is in its RunScope, and what few runs need (the subscription a
// publication left overloaded, the Done channel) is made for the run
// that needs it. A run's context is the executor's one allocation per
// run, so its size sets how often a busy executor collects garbage.
type Run struct {
	// word is the count of publications under the run in progress, times
	// two, plus one once the run has ended.
	word atomic.Int64
	// ext is the run's *runExt: its scope's base until the run needs one
	// of its own (see own). Set when the run is made, then read and
	// swapped atomically.
	ext unsafe.Pointer
}

// runExt is what a Run refers to: the scope, and the parts that only
// some runs need.
type runExt struct {
	scope *RunScope
	// over is the first subscription a publication under the run left
	// overloaded.
	over atomic.Pointer[Subscription]
	done atomic.Pointer[runDone] // made on the first call of Done
}

// RunScope is what the runs of one executor share.
type RunScope struct {
	// Stop is done when the executor's drain deadline passes; it is the
	// parent whose values a Run's Value returns.
	Stop context.Context
	// Handoff lets publications under a run trigger dormant subscriptions
	// without waking a worker.
	Handoff bool

	once sync.Once
	base runExt // every run's ext until it needs its own; never written after once
}

// NewRun returns the context of a new run in scope s.
func (s *RunScope) NewRun() *Run {
	s.once.Do(func() { s.base.scope = s })
	return &Run{ext: unsafe.Pointer(&s.base)}
}

// x returns r's runExt.
func (r *Run) x() *runExt { return (*runExt)(atomic.LoadPointer(&r.ext)) }

// own returns r's own runExt, made now if r still has its scope's base,
// for a part that only r may write.
func (r *Run) own() *runExt {
	x := r.x()
	if x != &x.scope.base {
		return x
	}
	n := &runExt{scope: x.scope}
	if atomic.CompareAndSwapPointer(&r.ext, unsafe.Pointer(x), unsafe.Pointer(n)) {
		return n
	}
	return r.x()
}

// runDone is a Run's Done channel, made when it is asked for.
type runDone struct {
	mu   sync.Mutex
	ch   chan struct{}
	stop func() bool // unregisters the close of ch at Stop's end
}

// close closes ch, once.
func (d *runDone) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	select {
	case <-d.ch:
	default:
		close(d.ch)
	}
}

// runKey is the key under which a Run finds itself among a derived
// context's values.
type runKey struct{}

// RunOf returns the run whose context ctx is or derives from, or nil.
func RunOf(ctx context.Context) *Run {
	if r, ok := ctx.(*Run); ok {
		return r
	}
	r, _ := ctx.Value(runKey{}).(*Run)
	return r
}

// Deadline returns no deadline: the executor's drain deadline is not known
// before the stop.
func (r *Run) Deadline() (deadline time.Time, ok bool) { return time.Time{}, false }

// Done returns a channel closed when the run ends or its scope's Stop is
// done. It is made on the first call.
func (r *Run) Done() <-chan struct{} {
	if d := r.x().done.Load(); d != nil {
		return d.ch
	}
	x := r.own()
	d := &runDone{ch: make(chan struct{})}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !x.done.CompareAndSwap(nil, d) {
		return x.done.Load().ch
	}
	// Stored before the look at the run's end, which End marks before it
	// looks for done: one of the two closes it.
	if r.word.Load()&1 != 0 || x.scope.Stop.Err() != nil {
		close(d.ch)
		return d.ch
	}
	d.stop = context.AfterFunc(x.scope.Stop, d.close)
	return d.ch
}

// Err returns context.Canceled once the run has ended,
// context.DeadlineExceeded once its scope's Stop is done, and nil before.
func (r *Run) Err() error {
	if r.word.Load()&1 != 0 {
		return context.Canceled
	}
	if r.x().scope.Stop.Err() != nil {
		return context.DeadlineExceeded
	}
	return nil
}

// Value returns the run itself for the key that RunOf uses, and the
// scope's Stop's values otherwise.
func (r *Run) Value(key any) any {
	if key == (runKey{}) {
		return r
	}
	return r.x().scope.Stop.Value(key)
}

// String names the context, as the context package's do.
func (r *Run) String() string { return "robotexec.run" }

// enter begins a publication under r; once r is done (its run ended, or
// the scope's Stop is done) it begins nothing and returns r's Err.
func (r *Run) enter() error {
	if r.word.Add(2)&1 != 0 {
		r.word.Add(-2)
		return context.Canceled
	}
	if r.x().scope.Stop.Err() != nil {
		r.word.Add(-2)
		return context.DeadlineExceeded
	}
	return nil
}

// leave ends a publication that enter began.
func (r *Run) leave() { r.word.Add(-2) }

// overloaded records that a publication under r left s overloaded.
func (r *Run) overloaded(s *Subscription) { r.own().over.CompareAndSwap(nil, s) }

// Overloaded returns the first subscription that a publication under r
// left overloaded so far, or nil: the executor ends a run early for it.
func (r *Run) Overloaded() *Subscription { return r.x().over.Load() }

// End ends the run: publications under it from now on are refused, and
// End waits for those in progress (they never wait for room) before it
// returns, so that what they triggered or left overloaded is known. It
// returns the first subscription they left overloaded, or nil.
func (r *Run) End() *Subscription {
	for w := r.word.Or(1); w&^1 != 0; w = r.word.Load() {
		// A publication under the run on another goroutine (one the
		// callback started) is between enter and leave: it takes no
		// lock that a worker may hold, so it ends soon.
		runtime.Gosched()
	}
	x := r.x()
	if d := x.done.Load(); d != nil {
		d.mu.Lock()
		if d.stop != nil {
			d.stop()
		}
		d.mu.Unlock()
		d.close()
	}
	return x.over.Load()
}
