package executor

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/robotexec/robotexec/internal/tsc"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
	"github.com/robotexec/robotexec/waitset"
)

var (
	// ErrClosed is returned by registrations after the executor stopped.
	ErrClosed = errors.New("executor: closed")
	// ErrRunning is returned by Run when the executor is already running
	// or spinning.
	ErrRunning = errors.New("executor: already running")
)

// Options configure an executor. The zero value is valid.
type Options struct {
	// Workers is the number of worker goroutines; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
	// Clock drives the timers; nil means the system clock.
	Clock timers.Clock
	// Logger receives the executor's logs (panics of callbacks); nil means
	// slog.Default().
	Logger *slog.Logger
	// Observer receives every scheduling step (package waitset's events);
	// nil means none. It runs on the dispatch path.
	Observer waitset.Observer
	// NoHandoff turns off the hand-off of in-process publications (see
	// Publisher): every one then wakes an idle worker. For measurements.
	NoHandoff bool
	// Runs, if not nil, is told of every callback run when it ends, on the
	// worker, outside every lock, with its start and end read from Stamp:
	// the cheap alternative to Observer for metrics and traces (one call
	// and two clock reads per callback, each message of a batch its own,
	// and nothing at a message's delivery).
	Runs RunObserver
	// Stamp reads the clock for Runs, in ticks of the caller's choosing;
	// nil means nanoseconds of the monotonic clock.
	Stamp func() int64
	// Batch is the most messages a subscription's run serves back to
	// back, in their order, on one worker; 0 means DefaultBatch, and 1
	// one message per run. A run ends before Batch messages once it has
	// lasted BatchBudget or when a timer is due, so short callbacks share
	// one pass through the run queue and long ones do not batch at all.
	// Runs of callbacks that need resources or whose owner has in-process
	// publishers (Owner.Publisher), and runs made by the Spin methods,
	// serve one message.
	Batch int
	// BatchBudget is how long a subscription's run may go on to its next
	// message: after a callback that ends BatchBudget or more after the
	// run began, the run ends and the subscription goes to the back of
	// the ready queue. It bounds what a batch adds to other entities'
	// wait. 0 means DefaultBatchBudget.
	BatchBudget time.Duration
}

// DefaultBatch is the most messages a subscription's run serves when
// Options.Batch is 0. Passing a subscription from worker to worker moves
// its cache lines between cores, which costs more than an empty callback;
// runs of up to 8 messages halve the dispatch cost of short callbacks
// (BENCHMARKS.md).
const DefaultBatch = 8

// DefaultBatchBudget is the BatchBudget of Options whose BatchBudget is 0.
const DefaultBatchBudget = 10 * time.Microsecond

// Run describes one callback run for a RunObserver.
type Run struct {
	// Worker ran Entity.
	Worker int
	Entity *waitset.Entity
	// Trigger is what the run served: the message's Received time (zero if
	// the message had none), or the timer's deadline. Runs that call
	// nothing (a timer canceled meanwhile) are not reported.
	Trigger time.Time
	// Start and End are Stamp's readings around the callback.
	Start, End int64
}

// RunObserver is told of every run; see Options.Runs. Ran must be fast
// and must not block. The Run is passed by value: it fits in registers.
type RunObserver interface{ Ran(r Run) }

// Stats counts what an executor did.
type Stats struct {
	// Runs counts finished runs of callbacks, each message of a batch
	// once (skipped runs included). It is exact whenever the workers have
	// run out of work, after Run or a Spin method returns; while a worker
	// is busy it may lag by less than 64 + Options.Batch of that worker's
	// runs (workers publish their counts every 64 runs or so, to spare a
	// locked instruction per run).
	Runs uint64
	// Panics counts callbacks that panicked.
	Panics uint64
	// Wakeups counts the times a parked worker was woken for work.
	Wakeups uint64
	// Parked is the number of workers parked for lack of work now.
	Parked int
}

// Executor runs the callbacks of timers and subscriptions on a pool of
// worker goroutines. See the package documentation for its guarantees.
type Executor struct {
	// The fields are laid out by cache line: first what every run and
	// trigger reads and hardly anything writes, then the run queue, which
	// every dequeue writes, then the rest. Sharing a line with the run
	// queue, the first would cost every worker and producer a miss per
	// message.
	opts    Options
	log     *slog.Logger
	obs     waitset.Observer
	set     *waitset.Set
	timers  *timers.Queue
	workers []*worker
	// nidle is the number of parked workers, which every trigger reads;
	// it changes when a worker parks or is woken.
	nidle atomic.Int32
	// tscBatch says batches are timed on the time-stamp counter, which is
	// trusted here (see batchClock).
	tscBatch bool
	// spinUntil is a time-stamp counter reading up to which a worker
	// that runs out of work polls the timers instead of parking: a
	// deadline is near (see early). 0 for none.
	spinUntil atomic.Int64
	// budget is Options.BatchBudget in the ticks of batchClock; epoch is its
	// origin where the time-stamp counter is not used.
	budget int64
	epoch  time.Time
	_      [cacheLine - (unsafe.Sizeof(Options{})+112)%cacheLine]byte

	// mu guards the run queue and the parking of workers. The run queue has
	// two lanes: timers, taken from the wait set at every dequeue, run ahead
	// of subscriptions, taken as a batch when the run queue is empty.
	mu        sync.Mutex
	runTimers waitset.List
	runSubs   waitset.List
	held      waitset.List // subscriptions workers finished ready again (waitset.Set.Hold)
	idle      []*worker    // parked workers, most recently parked last
	stopping  bool
	done      bool
	live      int
	_         [cacheLine]byte

	// timersWaiting counts due timers taken from the wait set that have
	// not started: in the run queue's timer lane or queued on a busy
	// group. A batch ends when it is not 0 (see runMessages). It has a
	// line of its own: it changes at every timer's run, and batches read
	// it at every message.
	timersWaiting atomic.Int64
	_             [cacheLine - 8]byte
	// laneTimers is the timer lane's length last added to timersWaiting;
	// e.mu guards it.
	laneTimers int64

	mode atomic.Int32 // modeIdle, modeRunning, modeSpinning or modeClosed

	regMu     sync.Mutex
	closed    bool
	entities  []*entity
	resources map[string]*Resource

	panics  atomic.Uint64
	wakeups atomic.Uint64
	_       [64]byte // to whole lines: 576 bytes, a size class of whole lines
}

// cacheLine is the size of a cache line, which the hot structures pad to.
const cacheLine = 64

const (
	modeIdle = iota
	modeRunning
	modeSpinning
	modeClosed
)

type worker struct {
	id   int
	wake chan struct{}
	// nruns counts the worker's runs; only its goroutine touches it.
	// runs publishes it for Stats: every publishEvery runs, and whenever
	// the worker runs out of work, so that an idle executor's count is
	// exact. (An atomic add per run is a locked instruction, a tenth of
	// a dispatch's cost.)
	nruns uint64
	runs  atomic.Uint64
	// requeue is an entity the worker just finished that is ready again;
	// the worker holds it (waitset.Set.Hold) when it next takes the lock,
	// which it does at once, sparing the wait set's stack.
	requeue *waitset.Entity
	// runnable holds dequeued entities whose resource requests the worker's
	// releases completed; the worker runs them before taking new work.
	runnable waitset.List
	spun     bool          // the worker spun idle since it last found work
	spinFor  time.Duration // its next idle spin (see idleSpin)
	// msg holds the message of the subscription the worker runs, taken
	// straight from its queue (see run).
	msg subscribers.Message
	// batch is the most messages a subscription's run serves (see
	// Options.Batch): the executor's in Run, 1 in the Spin methods.
	batch int
	// published is the count of runs last stored in runs.
	published uint64
	// The worker's fields are its own: padded to 256 bytes, a size class
	// of whole cache lines, they share no line with another worker.
	_ [256 - 168]byte
}

// New returns an executor. Register callbacks through owners
// ([Executor.NewOwner]), then call [Executor.Run], or the Spin methods from a
// test.
func New(opts Options) *Executor {
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Clock == nil {
		opts.Clock = timers.System{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Batch <= 0 {
		opts.Batch = DefaultBatch
	}
	if opts.BatchBudget <= 0 {
		opts.BatchBudget = DefaultBatchBudget
	}
	if opts.Runs != nil && opts.Stamp == nil {
		epoch := time.Now()
		opts.Stamp = func() int64 { return int64(time.Since(epoch)) }
	}
	e := &Executor{opts: opts, log: opts.Logger, obs: opts.Observer, epoch: time.Now()}
	if ns := tsc.NsPerTick(); ns != 0 {
		e.tscBatch = true
		e.budget = int64(min(float64(opts.BatchBudget)/ns, 1<<62))
	} else {
		e.budget = int64(min(opts.BatchBudget, 1<<62))
	}
	e.set = waitset.New(e.wake, opts.Observer)
	e.timers = timers.NewQueue(opts.Clock, e.set)
	if e.timers.Pollable() && e.timers.Lead() > 0 {
		// Only a queue its workers can poll: early's spinning reads
		// the counter against the clock's deadlines.
		e.timers.SetEarly(e.early)
	}
	e.workers = make([]*worker, opts.Workers)
	for i := range e.workers {
		e.workers[i] = &worker{id: i, wake: make(chan struct{}, 1)}
	}
	return e
}

// Workers returns the number of worker goroutines Run starts.
func (e *Executor) Workers() int { return len(e.workers) }

// Clock returns the clock the executor's timers run on.
func (e *Executor) Clock() timers.Clock { return e.opts.Clock }

// Stats returns the executor's counters.
func (e *Executor) Stats() Stats {
	var s Stats
	for _, w := range e.workers {
		s.Runs += w.runs.Load()
	}
	s.Panics = e.panics.Load()
	s.Wakeups = e.wakeups.Load()
	s.Parked = int(e.nidle.Load())
	return s
}

// Run runs callbacks on the worker pool until ctx ends, then stops: timers
// stop firing, subscriptions refuse new messages (counted as dropped, reason
// closed), and the workers drain every queue — each message accepted before
// the stop is run, each trigger before it is served. Run returns nil once
// the workers have exited. An executor runs once; a second Run returns
// ErrRunning, and so does a Run during a Spin call.
func (e *Executor) Run(ctx context.Context) error {
	if !e.mode.CompareAndSwap(modeIdle, modeRunning) {
		return ErrRunning
	}
	var wg sync.WaitGroup
	e.mu.Lock()
	e.live = len(e.workers)
	e.mu.Unlock()
	for _, w := range e.workers {
		w.batch = e.opts.Batch
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.work(w)
		}()
	}
	<-ctx.Done()
	e.stop()
	wg.Wait()
	e.mode.Store(modeClosed)
	return nil
}

// stop closes the sources and tells the workers to drain and exit.
func (e *Executor) stop() {
	e.regMu.Lock()
	e.closed = true
	ents := slices.Clone(e.entities) // forget may change e.entities meanwhile
	e.regMu.Unlock()
	e.timers.Stop()
	for _, en := range ents {
		if en.sub != nil {
			en.sub.Close()
		}
	}
	e.mu.Lock()
	e.stopping = true
	idle := e.idle
	e.idle = nil
	e.nidle.Store(0)
	e.mu.Unlock()
	for _, w := range idle {
		w.signal()
	}
}

// publishEvery is how many runs a busy worker makes between publications
// of its count (see worker.runs).
const publishEvery = 64

// publish makes w's count of runs visible to Stats.
func (w *worker) publish() {
	if w.published != w.nruns {
		w.published = w.nruns
		w.runs.Store(w.nruns)
	}
}

// batchClock reads the clock that batches are timed on: the time-stamp
// counter where it is trusted, else the monotonic clock.
func (e *Executor) batchClock() int64 {
	if e.tscBatch {
		return tsc.Read()
	}
	return int64(time.Since(e.epoch))
}

func (w *worker) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// wake is the wait set's hook: it unparks one idle worker, if any, after an
// entity became ready.
func (e *Executor) wake() {
	if e.nidle.Load() == 0 {
		return
	}
	e.mu.Lock()
	w := e.popIdle()
	e.mu.Unlock()
	if w != nil {
		e.wakeups.Add(1)
		w.signal()
	}
}

// spinMargin is how long past a deadline a worker woken early for it
// polls, in case the counter's reading of the deadline is a little off.
const spinMargin = 20 * time.Microsecond

// early is the timer queue's early ring, a lead ahead of deadline: it
// wakes a worker that, finding nothing to do, polls the timers until the
// deadline has passed (see next), so that at the deadline a worker is
// running instead of asleep. Waking a sleeping thread takes tens of
// microseconds; the lead covers it.
func (e *Executor) early(deadline time.Time) {
	now, ticks := time.Now(), tsc.Read()
	e.spinUntil.Store(ticks + int64(float64(deadline.Sub(now)+spinMargin)/tsc.NsPerTick()))
	e.wake()
}

// spin polls the timers until the counter reaches until or work is
// ready, whichever is first.
func (e *Executor) spin(until int64) {
	for tsc.Read() < until {
		e.timers.Poll()
		if !e.set.Empty() {
			return
		}
	}
}

// idleSpin is the longest a worker that runs out of work keeps looking
// for more, yielding its processor between looks, before it parks.
//
// Parking is cheap for the worker but not for the process: every wake-up
// of a parked worker makes the Go scheduler start a spinning thread, and
// on a machine with few cores those threads outnumber the cores, so the
// kernel preempts one for a whole time slice (4 ms here). A preempted
// worker in the middle of a callback holds its subscription, and per-topic
// order makes the subscription's messages wait for it: at a million
// messages a second on two workers, the p99 dispatch latency was 1–3 ms
// with parking at once, 3–30 µs with this spin (internal/bench's
// LatencyExecutor).
//
// The spin adapts, so that it costs little where it does not help: each
// worker shortens its spin by an eighth of idleSpin (down to minIdleSpin)
// when a spin ends without work, as under periodic timers, and spins the
// whole idleSpin again as soon as work comes during one, as under a dense
// stream of messages.
const idleSpin = 20 * time.Microsecond

// minIdleSpin is the shortest idle spin: a look or two.
const minIdleSpin = time.Microsecond

// spinIdle looks for work for about w.spinFor: a trigger into the wait
// set ends it. Work that other workers hold or queue does not, as they
// take it themselves. It adapts w.spinFor to what it found.
func (e *Executor) spinIdle(w *worker) {
	if w.spinFor == 0 {
		w.spinFor = idleSpin
	}
	start := time.Now()
	for i := 0; ; i++ {
		if !e.set.Empty() {
			w.spinFor = idleSpin
			return
		}
		if i%8 == 7 && time.Since(start) > w.spinFor {
			w.spinFor = max(w.spinFor-idleSpin/8, minIdleSpin)
			return
		}
		runtime.Gosched()
	}
}

// popIdle takes the most recently parked worker: its cache is the warmest.
// e.mu must be held.
func (e *Executor) popIdle() *worker {
	n := len(e.idle)
	if n == 0 {
		return nil
	}
	w := e.idle[n-1]
	e.idle[n-1] = nil
	e.idle = e.idle[:n-1]
	e.nidle.Add(-1)
	return w
}

// unpark removes w from the idle stack if it is there. e.mu must be held.
func (e *Executor) unpark(w *worker) bool {
	for i, x := range e.idle {
		if x == w {
			copy(e.idle[i:], e.idle[i+1:])
			e.idle[len(e.idle)-1] = nil
			e.idle = e.idle[:len(e.idle)-1]
			e.nidle.Add(-1)
			return true
		}
	}
	return false
}

func (e *Executor) work(w *worker) {
	for {
		x := e.next(w, true)
		if x == nil {
			return
		}
		e.dispatch(w, x)
	}
}

// next returns the next entity for w: the head of the run queue, or, when
// the run queue is empty, the head of a new batch taken from the wait set.
// With park set it parks w while there is nothing to do and returns nil once
// the executor has stopped and drained; without, it returns nil at once when
// there is nothing to do.
func (e *Executor) next(w *worker, park bool) *waitset.Entity {
	if x := w.runnable.Pop(); x != nil {
		// Dequeued before, it waited for its resources; the worker's
		// release completed them. Timers a Poll serves here wait for
		// this run: another worker is woken for them.
		if e.timers.Poll() {
			e.wake()
		}
		if w.requeue != nil {
			e.mu.Lock()
			e.holdLocked(w)
			e.mu.Unlock()
		}
		return x
	}
	for {
		// Timers that fell due while every worker was busy, before the
		// alarm's thread got a processor (see timers.Queue.Poll).
		e.timers.Poll()
		e.mu.Lock()
		e.holdLocked(w)
		x := e.popLocked()
		if x == nil {
			// The scheduler's step (seed 000): waiting ∩ wait set becomes
			// one batch, timers first, only when the run queue is empty,
			// so a subscription that becomes ready waits for at most one
			// run queue's worth of entities before its batch.
			if n, _ := e.set.TakeWith(&e.runTimers, &e.runSubs, &e.held); n > 0 {
				x = e.popLocked()
			}
		}
		if x != nil {
			w.spun = false
			if e.obs != nil {
				// Observed under the lock, so that dequeues are recorded
				// in the order they happen.
				e.obs.Observe(waitset.Event{Op: waitset.Dequeue, Entity: x, Worker: w.id})
			}
			more := e.runTimers.Len()+e.runSubs.Len()+e.held.Len() > 0 || !e.set.Empty()
			e.mu.Unlock()
			if more {
				// Each worker that finds more work wakes the next one;
				// this also wakes a worker for work made ready quietly
				// (a hand-off the publishing worker did not take).
				e.wake()
			}
			return x
		}
		w.publish()
		if !park {
			e.mu.Unlock()
			return nil
		}
		if e.stopping && (e.done || len(e.idle) == e.live-1) {
			// Every other worker is parked and nothing is ready: the
			// executor has drained (seed 000's Termination).
			e.done = true
			e.live--
			idle := e.idle
			e.idle = nil
			e.nidle.Store(0)
			e.mu.Unlock()
			for _, o := range idle {
				o.signal()
			}
			return nil
		}
		if until := e.spinUntil.Load(); until != 0 && tsc.Read() < until {
			// A deadline is near: poll for it rather than sleep.
			e.mu.Unlock()
			e.spin(until)
			continue
		}
		if !w.spun {
			// Out of work: look for more a little while before
			// sleeping, once per idle period (see idleSpin).
			w.spun = true
			e.mu.Unlock()
			e.spinIdle(w)
			continue
		}
		w.spun = false
		e.idle = append(e.idle, w)
		e.nidle.Add(1)
		e.mu.Unlock()
		// A trigger that pushed before nidle grew did not see w parked;
		// look again before sleeping. Triggers push, then read nidle;
		// here nidle grew, then the set is read: one of the two sees the
		// other.
		if !e.set.Empty() {
			e.mu.Lock()
			e.unpark(w)
			e.mu.Unlock()
			continue
		}
		<-w.wake
	}
}

// popLocked takes the head of the run queue: a timer, if one is queued or
// waiting in the wait set — a due timer starts on the first worker that
// frees, ahead of queued subscriptions — else a subscription. e.mu must be
// held.
func (e *Executor) popLocked() *waitset.Entity {
	if e.set.TimersPending() {
		e.set.TakeTimers(&e.runTimers)
	}
	x := e.runTimers.Pop()
	if n := int64(e.runTimers.Len()); n != e.laneTimers {
		e.timersWaiting.Add(n - e.laneTimers)
		e.laneTimers = n
	}
	if x != nil {
		return x
	}
	return e.runSubs.Pop()
}

// holdLocked moves the entity w finished ready again, if any, into the
// held list, where the next batch takes it. e.mu must be held.
func (e *Executor) holdLocked(w *worker) {
	if x := w.requeue; x != nil {
		w.requeue = nil
		e.set.Hold(x, &e.held)
	}
}

// dispatch runs x: it acquires x's resources (seed 002) and, if it holds
// them all, runs x or hands it to the worker that holds its mutually
// exclusive group (seed 001). A request that must wait for a resource
// leaves x to the worker whose release completes it. dispatch returns the
// number of runs it made.
func (e *Executor) dispatch(w *worker, x *waitset.Entity) int {
	en := x.Data.(*entity)
	if a := en.acq; a != nil && !a.done && !e.acquire(a) {
		return 0
	}
	g := en.group
	if g == nil {
		// The worker goes to the run queue's lock right after: it holds
		// x there if x is ready again.
		e.run(w, x, en, true)
		return 1
	}
	n := 0
	if g.scheduled.CompareAndSwap(0, 1) {
		// The group was idle: x runs at once, as if queued on the group
		// and popped by its claimer, which this worker now is.
		e.run(w, x, en, true)
		n++
		if g.scheduled.Add(-1) == 0 {
			return n
		}
		// Others queued meanwhile: hold x where other workers see it
		// before running them.
		e.mu.Lock()
		e.holdLocked(w)
		e.mu.Unlock()
	} else {
		if en.timer != nil {
			e.timersWaiting.Add(1) // until it starts, batches of the group end
		}
		g.mu.Lock()
		g.q.Push(x)
		g.mu.Unlock()
		if g.scheduled.Add(1) > 1 {
			// Another worker holds the group and will run x after what
			// is ahead of it; this worker goes back to the run queue.
			return 0
		}
	}
	for {
		if e.timers.Poll() { // as in next: this loop may run long
			e.wake() // the timers would wait for the group's callbacks
		}
		g.mu.Lock()
		y := g.q.Pop()
		g.mu.Unlock()
		ey := y.Data.(*entity)
		if ey.timer != nil {
			e.timersWaiting.Add(-1)
		}
		e.run(w, y, ey, false)
		n++
		if g.scheduled.Add(-1) == 0 {
			return n
		}
		if !e.set.Empty() {
			// Work made ready quietly by the group's callbacks (a
			// hand-off) must not wait for the group's loop to end.
			e.wake()
		}
	}
}

// run runs x: a timer's call, or a subscription's front message and, in a
// batch, the messages behind it (see Options.Batch).
func (e *Executor) run(w *worker, x *waitset.Entity, en *entity, hold bool) {
	x.Start()
	o := en.owner
	tracked := o.tracked.Load()
	if tracked {
		o.running.Add(1)
	}
	more := false
	if en.timer != nil {
		e.runTimer(w, x, en)
		w.nruns++
	} else {
		batch := w.batch
		if tracked || en.acq != nil {
			// A mute or a resource's release is due after each message.
			batch = 1
		}
		more = e.runMessages(w, x, en, batch)
	}
	if tracked {
		o.running.Add(-1)
		if o.mutor.Load() != nil { // a load first: no write on the common path
			if s := o.mutor.Swap(nil); s != nil {
				e.mute(x, en, s)
			}
		}
	}
	if en.acq != nil {
		e.release(en.acq, &w.runnable)
	}
	if e.obs != nil {
		e.obs.Observe(waitset.Event{Op: waitset.Finish, Entity: x, Worker: w.id})
	}
	if w.nruns-w.published >= publishEvery {
		w.published = w.nruns
		w.runs.Store(w.nruns)
	}
	if hold {
		if x.FinishHeld(more) {
			w.requeue = x
		}
		return
	}
	x.Finish(more)
}

// runTimer runs x's timer callback, unless the timer was canceled since it
// fell due.
func (e *Executor) runTimer(w *worker, x *waitset.Entity, en *entity) {
	ev, ok := en.timer.Call()
	if e.obs != nil {
		e.obs.Observe(waitset.Event{Op: waitset.Start, Entity: x, Worker: w.id})
	}
	if !ok {
		return
	}
	runs := e.opts.Runs
	if runs == nil {
		e.callTimer(en, ev)
		return
	}
	start := e.opts.Stamp()
	e.callTimer(en, ev)
	runs.Ran(Run{Worker: w.id, Entity: x, Trigger: ev.Expected, Start: start, End: e.opts.Stamp()})
}

// runMessages runs the callback of x's front message, then of the messages
// behind it, up to batch in all, while the run has lasted less than
// Options.BatchBudget and no timer is due (see batchEnds). It reports
// whether messages remain.
func (e *Executor) runMessages(w *worker, x *waitset.Entity, en *entity, batch int) bool {
	m := &w.msg
	runs := e.opts.Runs
	var until int64
	op := waitset.Start
	for k := 1; ; k++ {
		seq, ok, more := en.sub.TakeInto(m)
		if e.obs != nil {
			e.obs.Observe(waitset.Event{Op: op, Entity: x, Worker: w.id, Seq: seq})
		}
		if !ok {
			w.nruns++ // a run that found the queue empty counts
			return false
		}
		if k == 1 && more && batch > 1 {
			until = e.batchClock() + e.budget
		}
		if runs == nil {
			e.callMessage(en, m)
		} else {
			start := e.opts.Stamp()
			e.callMessage(en, m)
			runs.Ran(Run{Worker: w.id, Entity: x, Trigger: m.Received, Start: start, End: e.opts.Stamp()})
		}
		w.nruns++
		if !more || k >= batch || e.batchEnds(en, until) {
			// The callback had a copy; the payload must not live on here.
			m.Topic, m.Payload = "", nil
			return more
		}
		op = waitset.Next
	}
}

// batchEnds reports whether a subscription's batch ends after the callback
// that just ran: the run has lasted its budget (until, on batchClock); a
// timer is due, in the wait set, or due and not yet served by the alarm,
// or taken from the wait set and not started (in the timer lane, or
// queued on a group); or the owner got an in-process publisher during the
// run, so that it serves one message per run from now on (see run).
func (e *Executor) batchEnds(en *entity, until int64) bool {
	now := e.batchClock()
	return now >= until || e.timersWaiting.Load() != 0 || e.set.TimersPending() ||
		(e.tscBatch && e.timers.Due(now)) || en.owner.tracked.Load()
}
