package executor

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/facade"
	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/internal/tsc"
	"github.com/robotexec/robotexec/timers"
	"github.com/robotexec/robotexec/waitset"
)

var (
	// ErrClosed is returned by registrations after the executor stopped.
	ErrClosed = errors.New("executor: closed")
	// ErrRunning is returned by Run when the executor is already running
	// or spinning, and by Shutdown during a Spin call.
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
	// Runs, if not nil, is told of every callback run when it ends, on the
	// worker, outside every lock, with its start and end read from Stamp:
	// the cheap way to observe runs for metrics and traces (one call
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
	// Runs of callbacks that need resources, and runs made by the Spin
	// methods, serve one message; a run also ends after a message whose
	// callback's publication left a subscription overloaded.
	Batch int
	// Observer is robotexec's own tracing of its tests, which check the
	// scheduling properties on recorded steps: leave it nil.
	Observer trace.Observer
	// BatchBudget is how long a subscription's run may go on to its next
	// message: after a callback that ends BatchBudget or more after the
	// run began, the run ends and the subscription goes to the back of
	// the ready queue. It bounds what a batch adds to other entities'
	// wait. 0 means DefaultBatchBudget.
	BatchBudget time.Duration

	// PriorityWorkers is the number of workers, beyond Workers, that run
	// only subscriptions of a priority above 0 (see Priority), so that
	// a callback of the hot path finds a worker free however long the
	// others' callbacks run; the Workers then run everything else, and no
	// such subscription. On Linux the Workers' threads run at nice
	// 10, below the priority workers', so that the OS gives a core
	// to a priority worker that wakes while they are busy: Run locks each
	// worker to a thread of its own, which ends with it (GOMAXPROCS must
	// be above the workers in all for the OS to choose; robotexec run
	// raises it). The Spin methods run every callback on their caller, as
	// without. 0, the default, makes no priority worker.
	PriorityWorkers int
	// Realtime runs the priority workers' threads in Linux's real-time
	// class, SCHED_FIFO at priority 1, which the OS runs before any
	// other thread, instead of at nice 0: the hot path preempts the
	// other workers' callbacks at once. It needs CAP_SYS_NICE or an
	// RLIMIT_RTPRIO of 1 or more; where the OS refuses it, the workers
	// run as without, and the executor logs why once. Linux caps the
	// real-time threads' share of the CPU (kernel.sched_rt_runtime_us,
	// 95% by default). It does nothing without PriorityWorkers.
	Realtime bool
	// PinWorkers pins each worker's thread to one CPU, worker i (the
	// priority workers after the others) to the i-th of the CPUs the
	// process may run on, in turn (Linux's affinity mask: taskset's
	// choice, or every CPU): a worker woken for a callback then finds its
	// CPU, rather than waiting for the OS to move it off another worker's
	// CPU. With no more workers than CPUs no two share one; the other
	// threads of the process (the timer source's, the MQTT client's) run
	// on any. Run locks each worker to a thread of its own, which ends
	// with it (GOMAXPROCS must be above the workers in all for the timer
	// source to find a processor; robotexec run raises it). Elsewhere
	// than on Linux, and where the OS refuses, the workers run unpinned,
	// and the executor logs why once. The default is false.
	PinWorkers bool
	// ReserveForTimers keeps a worker for a timer about to fall due: a
	// worker of Run does not start a subscription's callback of priority
	// 0 when a timer falls due before the callback's expected end (the
	// mean of its last runs) and no other worker is out of work; it
	// waits for the timer, runs it, and the callback starts after. The
	// timer then starts on time instead of behind a callback that started
	// just before its deadline. A callback is held at most its expected
	// run time from its first hold (docs/design.md, Priorities).
	// Callbacks of a priority above 0, and the Spin methods, are never
	// held; on a clock the workers cannot poll (a simulated one) nothing
	// is. The default is false.
	ReserveForTimers bool

	// noHandoff turns off the hand-off of in-process publications (see
	// bus.Run.Handoff): every one then wakes an idle worker. Only the package's
	// tests and benchmarks set it, through WithHandoff in export_test.go,
	// to measure what the hand-off saves.
	noHandoff bool
}

// Run describes one callback run for a RunObserver.
type Run struct {
	// Worker ran the callback whose Callback.ID is ID.
	Worker int
	ID     uint64
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
	// The fields are laid out by cache line, in sections that each start a
	// line and share none with another: first what every run and trigger
	// reads and hardly anything writes, then the run queue, which every
	// dequeue writes, then the count of waiting timers, which every
	// timer's run writes and every batch reads, then the rest. Sharing a
	// line with the run queue, the first would cost every worker and
	// producer a miss per message. Each section is padded to the start of
	// the next line (a whole line when it ends on one), so an executor is
	// whole lines too, and its size class places it on a line's start.
	readMostly
	_ [cacheLine - unsafe.Sizeof(readMostly{})%cacheLine]byte
	runQueue
	_ [cacheLine - unsafe.Sizeof(runQueue{})%cacheLine]byte
	// timersWaiting counts due timers taken from the wait set that have
	// not started: in the run queue's timer lane, taken by a worker on
	// its way to run them, or queued on a busy group. A batch ends when it is not 0 (see runMessages). It has a
	// line of its own: it changes at every timer's run, and batches read
	// it at every message.
	timersWaiting atomic.Int64
	_             [cacheLine - unsafe.Sizeof(atomic.Int64{})]byte
	cold
	_ [cacheLine - unsafe.Sizeof(cold{})%cacheLine]byte
}

// readMostly is the section of an Executor that every run and trigger reads
// and hardly anything writes.
type readMostly struct {
	opts    Options
	log     *slog.Logger
	obs     trace.Observer
	set     *waitset.Set
	timers  *timerq.Queue
	workers []*worker
	// nidle is the number of parked workers, which every trigger reads;
	// it changes when a worker parks or is woken.
	nidle atomic.Int32
	// batchOn is the clock that batches are timed on (see batchClock):
	// onTSC where the time-stamp counter is trusted.
	batchOn int
	// busyUntil is a reading of the timer queue's poll clock
	// (timerq.Fast.Now) up to which a worker that runs out of work polls
	// the timers instead of parking: a deadline is near (see early). 0
	// for none.
	busyUntil atomic.Int64
	// budget is Options.BatchBudget in the ticks of batchClock; epoch is its
	// origin where the time-stamp counter is not used.
	budget int64
	epoch  time.Time
	// scope is what the contexts of the runs share (see Executor.run).
	scope *bus.RunScope
}

// runQueue is the section of an Executor that mu guards: the run queue and
// the parking of workers. The run queue has three lanes: timers, taken from
// the wait set at every dequeue, run ahead of subscriptions; the urgent
// subscriptions (a priority above 0), also taken at every dequeue, ahead of
// the others, taken as a batch when their lane and the timers' are empty.
type runQueue struct {
	mu        sync.Mutex
	runTimers waitset.List
	runSubs   waitset.List
	held      waitset.List // subscriptions workers finished ready again (waitset.Fast.Hold)
	idle      []*worker    // parked workers, most recently parked last
	// state is the executor's lifecycle (see stateIdle). It lives here,
	// by the idle stack, because a worker out of work reads both under mu;
	// it changes only at the lifecycle's few transitions.
	state atomic.Int32
	// live counts Run's workers that have not retired. It is a count, not
	// a stage of the lifecycle: a worker retires when the executor is
	// draining and every other live worker is parked (see next).
	live int32
	// laneTimers is the timer lane's length last added to timersWaiting.
	laneTimers int64
	// prio is the urgent lane and the state of the choice among the
	// queued subscriptions (see pickLocked), off the run queue's two
	// lines.
	prio *priorities
}

// cold is the section of an Executor that the dispatch path does not touch,
// but for wakeups, counted when a parked worker is woken.
type cold struct {
	regMu     sync.Mutex // guards entities and resources
	entities  []*entity
	resources map[string]*resource

	panics  atomic.Uint64
	wakeups atomic.Uint64
	// nfree counts Run's workers out of work, where they count it
	// (Options.ReserveForTimers); holder is the worker that holds a
	// callback for a timer, if any, and holdUntil the deadline: one at a
	// time, as a worker holds only while no other is out of work. e.mu
	// guards them.
	nfree     int
	holder    *worker
	holdUntil int64
	nholds    int // the holds made, for the tests
	shut      shutdown
	// realtimeOnce logs a refusal of Options.Realtime once, threadOnce
	// one of Options.PinWorkers.
	realtimeOnce, threadOnce sync.Once
}

// cacheLine is the size of a cache line, which the hot structures pad to:
// golang.org/x/sys/cpu's for the platform (64 bytes on amd64).
const cacheLine = unsafe.Sizeof(cpu.CacheLinePad{})

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
	e := &Executor{readMostly: readMostly{opts: opts, log: opts.Logger, obs: opts.Observer, epoch: time.Now(), scope: new(bus.RunScope)}}
	e.prio = new(priorities)
	e.shut.stopping = make(chan struct{})
	e.shut.exited = make(chan struct{})
	e.scope.Stop, e.shut.expire = context.WithCancel(context.Background())
	e.scope.Handoff = !opts.noHandoff
	if ns := tsc.NsPerTick(); ns != 0 {
		e.batchOn = onTSC
		e.budget = int64(min(float64(opts.BatchBudget)/ns, 1<<62))
	} else if ns := tsc.LocalNsPerTick(); ns != 0 {
		e.batchOn = onCPU
		e.budget = int64(min(float64(opts.BatchBudget)/ns, 1<<62))
	} else {
		e.budget = int64(min(opts.BatchBudget, 1<<62))
	}
	e.set = waitset.New(e.wake, opts.Observer)
	e.timers = timerq.NewQueue(facade.Clock(opts.Clock), e.set)
	if e.timers.Fast().Pollable() && e.timers.Fast().Lead() > 0 {
		// Only a queue its workers can poll: early's busy-wait reads
		// the queue's poll clock against the deadlines.
		e.timers.Fast().SetEarly(e.early)
	}
	if opts.PriorityWorkers < 0 {
		opts.PriorityWorkers = 0
	}
	e.opts.PriorityWorkers = opts.PriorityWorkers
	e.workers = make([]*worker, opts.Workers+opts.PriorityWorkers)
	for i := range e.workers {
		e.workers[i] = &worker{workerState: workerState{id: i, wake: make(chan struct{}, 1), priority: i >= opts.Workers, slot: e.scope.NewSlot()}}
	}
	return e
}

// Workers returns the number of worker goroutines Run starts, the
// priority workers included.
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
