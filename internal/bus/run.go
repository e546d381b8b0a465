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
// A Run is 8 bytes, made once per run, the executor's one allocation per
// run (its size sets how often a busy executor collects garbage): what
// the runs of one worker share, one after another, is in the worker's
// RunSlot, whose current run it is until it ends.
type Run struct {
	slot *RunSlot
}

// RunSlot is where one worker's runs keep their state, one run at a time.
type RunSlot struct {
	scope *RunScope
	// cur is the slot's run until it ends, then the next run's: a Run
	// that is not its slot's cur has ended.
	cur atomic.Pointer[Run]
	// pubs counts the publications under cur in progress. A publication
	// under a run that has ended counts here only until it finds so.
	pubs atomic.Int64
	// over is the first subscription a publication under cur left
	// overloaded.
	over atomic.Pointer[Subscription]
	// done is the Done channel of cur, or of an earlier run (its run
	// says whose), made on the first call of Done.
	done atomic.Pointer[runDone]
	// next is cur when End made it the next run's context, for NewRun;
	// the slot's worker's alone.
	next *Run
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

// NewSlot returns a slot for the runs of one worker of scope s.
func (s *RunScope) NewSlot() *RunSlot { return &RunSlot{scope: s} }

// NewRun returns the context of a new run in scope s, in a slot of its
// own.
func (s *RunScope) NewRun() *Run { return s.NewSlot().NewRun() }

// NewRun returns the context of a new run in slot s, whose run before it
// must have ended: the one that End made current, if it did.
func (s *RunSlot) NewRun() *Run {
	if r := s.next; r != nil {
		s.next = nil
		return r
	}
	r := &Run{slot: s}
	s.cur.Store(r)
	return r
}

// ended reports whether r's run has ended.
func (r *Run) ended() bool { return r.slot.cur.Load() != r }

// closedDone is the Done channel of a run that ended before anyone asked.
var closedDone = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// runDone is a Run's Done channel, made when it is asked for.
type runDone struct {
	run  *Run
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
	return runAbove(ctx)
}

// runAbove is RunOf of a context that is not a run itself: kept apart,
// so that RunOf is inlined.
func runAbove(ctx context.Context) *Run {
	r, _ := ctx.Value(runKey{}).(*Run)
	return r
}

// Deadline returns no deadline: the executor's drain deadline is not known
// before the stop.
func (r *Run) Deadline() (deadline time.Time, ok bool) { return time.Time{}, false }

// Done returns a channel closed when the run ends or its scope's Stop is
// done. It is made on the first call.
func (r *Run) Done() <-chan struct{} {
	s := r.slot
	if d := s.done.Load(); d != nil && d.run == r {
		return d.ch
	}
	if r.ended() {
		return closedDone
	}
	d := &runDone{run: r, ch: make(chan struct{})}
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		old := s.done.Load()
		if old != nil && old.run == r {
			return old.ch
		}
		if s.done.CompareAndSwap(old, d) {
			break
		}
	}
	// Stored before the look at the run's end, which End marks before it
	// looks for done: one of the two closes it.
	if r.ended() || s.scope.Stop.Err() != nil {
		close(d.ch)
		return d.ch
	}
	d.stop = context.AfterFunc(s.scope.Stop, d.close)
	return d.ch
}

// Err returns context.Canceled once the run has ended,
// context.DeadlineExceeded once its scope's Stop is done, and nil before.
func (r *Run) Err() error {
	if r.ended() {
		return context.Canceled
	}
	if r.slot.scope.Stop.Err() != nil {
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
	return r.slot.scope.Stop.Value(key)
}

// String names the context, as the context package's do.
func (r *Run) String() string { return "robotexec.run" }

// enter begins a publication under r; once r is done (its run ended, or
// the scope's Stop is done) it begins nothing and returns r's Err.
func (r *Run) enter() error {
	s := r.slot
	// Counted before the look at the run's end, which End marks before
	// it waits for the count: End waits for this publication, or it
	// finds the run ended.
	s.pubs.Add(1)
	if r.ended() {
		s.pubs.Add(-1)
		return context.Canceled
	}
	if s.scope.Stop.Err() != nil {
		s.pubs.Add(-1)
		return context.DeadlineExceeded
	}
	return nil
}

// leave ends a publication that enter began.
func (r *Run) leave() { r.slot.pubs.Add(-1) }

// handoff reports whether publications under r may trigger dormant
// subscriptions quietly (RunScope.Handoff).
func (r *Run) handoff() bool { return r.slot.scope.Handoff }

// overloaded records that a publication under r, between enter and
// leave, left s overloaded.
func (r *Run) overloaded(s *Subscription) { r.slot.over.CompareAndSwap(nil, s) }

// Overloaded returns the first subscription that a publication under r
// left overloaded so far, or nil: the executor ends a run early for it.
func (r *Run) Overloaded() *Subscription { return r.slot.over.Load() }

// End ends the run: publications under it from now on are refused, and
// End waits for those in progress (they never wait for room) before it
// returns, so that what they triggered or left overloaded is known. It
// returns the first subscription they left overloaded, or nil.
func (r *Run) End() *Subscription {
	s := r.slot
	// The next run's context replaces r: one store ends r and starts it.
	s.next = &Run{slot: s}
	s.cur.Store(s.next)
	for s.pubs.Load() != 0 {
		// A publication under the run on another goroutine (one the
		// callback started) is between enter and leave: it takes no
		// lock that a worker may hold, so it ends soon.
		runtime.Gosched()
	}
	if d := s.done.Load(); d != nil && d.run == r {
		d.mu.Lock()
		if d.stop != nil {
			d.stop()
		}
		d.mu.Unlock()
		d.close()
	}
	over := s.over.Load()
	if over != nil {
		s.over.Store(nil)
	}
	return over
}
