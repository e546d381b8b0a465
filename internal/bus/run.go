package bus

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
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
// A Run is 32 bytes, made once per run: what all the runs of an executor
// share is in its RunScope.
type Run struct {
	// word is the count of publications under the run in progress, times
	// two, plus one once the run has ended.
	word atomic.Int64
	// over is the first subscription a publication under the run left
	// overloaded.
	over  atomic.Pointer[Subscription]
	scope *RunScope
	done  atomic.Pointer[runDone] // made on the first call of Done
}

// RunScope is what the runs of one executor share.
type RunScope struct {
	// Stop is done when the executor's drain deadline passes; it is the
	// parent whose values a Run's Value returns.
	Stop context.Context
	// Handoff lets publications under a run trigger dormant subscriptions
	// without waking a worker.
	Handoff bool
}

// NewRun returns the context of a new run in scope s.
func (s *RunScope) NewRun() *Run { return &Run{scope: s} }

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
	if d := r.done.Load(); d != nil {
		return d.ch
	}
	d := &runDone{ch: make(chan struct{})}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !r.done.CompareAndSwap(nil, d) {
		return r.done.Load().ch
	}
	// Stored before the look at the run's end, which End marks before it
	// looks for done: one of the two closes it.
	if r.word.Load()&1 != 0 || r.scope.Stop.Err() != nil {
		close(d.ch)
		return d.ch
	}
	d.stop = context.AfterFunc(r.scope.Stop, d.close)
	return d.ch
}

// Err returns context.Canceled once the run has ended,
// context.DeadlineExceeded once its scope's Stop is done, and nil before.
func (r *Run) Err() error {
	if r.word.Load()&1 != 0 {
		return context.Canceled
	}
	if r.scope.Stop.Err() != nil {
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
	return r.scope.Stop.Value(key)
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
	if r.scope.Stop.Err() != nil {
		r.word.Add(-2)
		return context.DeadlineExceeded
	}
	return nil
}

// leave ends a publication that enter began.
func (r *Run) leave() { r.word.Add(-2) }

// overloaded records that a publication under r left s overloaded.
func (r *Run) overloaded(s *Subscription) { r.over.CompareAndSwap(nil, s) }

// Overloaded returns the first subscription that a publication under r
// left overloaded so far, or nil: the executor ends a run early for it.
func (r *Run) Overloaded() *Subscription { return r.over.Load() }

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
	if d := r.done.Load(); d != nil {
		d.mu.Lock()
		if d.stop != nil {
			d.stop()
		}
		d.mu.Unlock()
		d.close()
	}
	return r.over.Load()
}
