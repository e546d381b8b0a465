package bus

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Run is the context of one callback run: the executor makes one for each
// call of a callback and passes it to the callback, as net/http passes a
// request's context to its handler. A publication under it (the Run
// itself, or a context derived from it) is the run's: it never waits for
// room in a local subscription's queue, it reports the subscriptions it
// leaves overloaded to the run (the executor mutes the callback after the
// run, docs/design.md, Resources), and, with Handoff, it triggers dormant
// subscriptions quietly, for the run's worker to take when the run ends.
//
// A Run is done when its run ends (Err is context.Canceled) or when Stop,
// the executor's stop context, is done first (Err is
// context.DeadlineExceeded: the executor's drain deadline passed). A
// publication under a done Run is refused with its Err, so a goroutine
// that keeps a run's context past the run cannot publish as the run.
//
// The executor fills in the exported fields before the call and calls End
// after it; nothing else may change them.
type Run struct {
	// Stop is done when the executor's drain deadline passes; it is the
	// parent whose values Value returns.
	Stop context.Context
	// Handoff lets publications under the run trigger dormant
	// subscriptions without waking a worker.
	Handoff bool

	// word is the count of publications under the run in progress, times
	// two, plus one once the run has ended.
	word atomic.Int64
	// over is the first subscription a publication under the run left
	// overloaded (see Overloaded).
	over atomic.Pointer[Subscription]

	mu   sync.Mutex                    // serializes the making and the closing of done
	done atomic.Pointer[chan struct{}] // made on the first call of Done
	stop func() bool                   // unregisters the close of done at Stop's end
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

// Done returns a channel closed when the run ends or Stop is done. It is
// made on the first call.
func (r *Run) Done() <-chan struct{} {
	if d := r.done.Load(); d != nil {
		return *d
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if d := r.done.Load(); d != nil {
		return *d
	}
	d := make(chan struct{})
	r.done.Store(&d)
	// Stored before the look at the run's end, which End marks before it
	// looks for done: one of the two closes it.
	if r.word.Load()&1 != 0 || r.Stop.Err() != nil {
		close(d)
		r.stop = func() bool { return false }
		return d
	}
	r.stop = context.AfterFunc(r.Stop, r.closeDone)
	return d
}

// closeDone closes done, once.
func (r *Run) closeDone() {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := *r.done.Load()
	select {
	case <-d:
	default:
		close(d)
	}
}

// Err returns context.Canceled once the run has ended,
// context.DeadlineExceeded once Stop is done, and nil before.
func (r *Run) Err() error {
	if r.word.Load()&1 != 0 {
		return context.Canceled
	}
	if r.Stop.Err() != nil {
		return context.DeadlineExceeded
	}
	return nil
}

// Value returns the run itself for the key that RunOf uses, and Stop's
// values otherwise.
func (r *Run) Value(key any) any {
	if key == (runKey{}) {
		return r
	}
	return r.Stop.Value(key)
}

// String names the context, as the context package's do.
func (r *Run) String() string { return "robotexec.run" }

// enter begins a publication under r; once r is done (its run ended, or
// Stop is done) it begins nothing and returns r's Err.
func (r *Run) enter() error {
	if r.word.Add(2)&1 != 0 {
		r.word.Add(-2)
		return context.Canceled
	}
	if r.Stop.Err() != nil {
		r.word.Add(-2)
		return context.DeadlineExceeded
	}
	return nil
}

// leave ends a publication that enter began.
func (r *Run) leave() { r.word.Add(-2) }

// overloaded records that a publication under r left s overloaded.
func (r *Run) overloaded(s *Subscription) { r.over.CompareAndSwap(nil, s) }

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
	if r.done.Load() != nil {
		r.mu.Lock()
		r.stop()
		r.mu.Unlock()
		r.closeDone()
	}
	return r.over.Load()
}
