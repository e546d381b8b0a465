package executor

import (
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// worker is the state of one worker goroutine: one of Run's, or, for the
// Spin methods, the calling goroutine (workers[0]). Its fields are its own:
// padded to workerSize, a size class of whole cache lines, they share no
// line with another worker's.
type worker struct {
	workerState
	_ [workerSize - unsafe.Sizeof(workerState{})]byte
}

// workerSize is the size of a worker: 256 bytes, whole cache lines.
const workerSize = 256

// workerState is a worker's fields, without its padding.
type workerState struct {
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
	// the worker holds it (waitset.Fast.Hold) when it next takes the lock,
	// which it does at once, sparing the wait set's stack.
	requeue *waitset.Entity
	// runnable holds dequeued entities whose resource requests the worker's
	// releases completed; the worker runs them before taking new work.
	runnable waitset.List
	busyFor  time.Duration // its next idle busy-wait (see idleBusyWait)
	// msg holds the message of the subscription the worker runs, taken
	// straight from its queue (see run).
	msg bus.Message
	// claim is the messages of the run's queue that the run claimed (see
	// runClaimed).
	claim bus.Claim
	// batch is the most messages a subscription's run serves (see
	// Options.Batch): the executor's in Run, 1 in the Spin methods.
	batch int
	// run is the context of the run the worker makes (see Executor.run),
	// made in slot, where the worker's runs keep their state.
	run  *bus.Run
	slot *bus.RunSlot
	// priority marks a priority worker (Options.PriorityWorkers).
	priority bool
	// locked marks a worker on a thread of its own (startThread), for
	// which runtime.Gosched is no cheap yield: the runtime hands the
	// thread's processor to another thread, and back.
	locked bool
	// reserves marks a worker of Run that keeps itself for timers
	// (Options.ReserveForTimers); free is set while it is out of work,
	// counted in Executor.nfree.
	reserves, free bool
	busyWaited     bool // the worker busy-waited idle since it last found work
}

// publishEvery is how many runs a busy worker makes between publications
// of its count (see worker.runs).
const publishEvery = 64

// publish makes w's count of runs visible to Stats.
func (w *worker) publish() {
	// Only w's goroutine stores runs: loading it is reading its own line.
	if w.runs.Load() != w.nruns {
		w.runs.Store(w.nruns)
	}
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
	if w.priority {
		return e.nextUrgent(w)
	}
	if x := e.takeRunnable(w); x != nil {
		return x
	}
	for {
		// Timers that fell due while every worker was busy, before the
		// alarm's thread got a processor (see timerq.Fast.Poll).
		e.timers.Fast().Poll()
		e.mu.Lock()
		x, more := e.dequeueLocked(w)
		if w.reserves {
			if until := e.countFree(w, x == nil); until != 0 {
				// Held for a timer: w waits for it, polling.
				e.mu.Unlock()
				e.busyWait(until)
				continue
			}
		}
		if x != nil {
			w.busyWaited = false
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
		if e.leftToPriorityLocked() {
			// Urgent work is left, which w may not take: a priority
			// worker takes it.
			e.wakeUrgentLocked()
		} else if s := e.state.Load(); s >= stateDraining && (s == stateDrained || len(e.idle) == int(e.live)-1) {
			// Every other worker is parked and nothing is ready: the
			// executor has drained (Termination, docs/design.md,
			// Scheduler model).
			e.retireLocked()
			return nil
		}
		e.waitLocked(w)
	}
}

// takeRunnable pops the head of w's runnable list, if any, for w to run
// before it takes new work.
func (e *Executor) takeRunnable(w *worker) *waitset.Entity {
	x := w.runnable.Pop()
	if x == nil {
		return nil
	}
	if x.Data.(*entity).timer != nil {
		e.timersWaiting.Add(1) // as popLocked's: until it starts
	}
	// Dequeued before, it waited for its resources; the worker's
	// release completed them. Timers a Poll serves here wait for
	// this run: another worker is woken for them.
	if e.timers.Fast().Poll() {
		e.wake()
	}
	if w.requeue != nil {
		e.mu.Lock()
		e.holdLocked(w)
		e.mu.Unlock()
	}
	return x
}

// dispatch runs x: it acquires x's resources (docs/design.md, Resources)
// and, if it holds them all, runs x or hands it to the worker that holds its
// mutually exclusive group (docs/design.md, Callback groups). A request that
// must wait for a resource leaves x to the worker whose release completes
// it. dispatch returns the number of runs it made.
func (e *Executor) dispatch(w *worker, x *waitset.Entity) int {
	en := x.Data.(*entity)
	if a := en.acq; a != nil && !a.done && !e.acquire(a) {
		e.timerStarts(en) // it waits for a resource, not for a batch
		return 0
	}
	g := en.group
	if g == nil {
		// The worker goes to the run queue's lock right after: it holds
		// x there if x is ready again.
		e.timerStarts(en)
		e.run(w, x, en, true)
		return 1
	}
	n := 0
	if g.scheduled.CompareAndSwap(0, 1) {
		// The group was idle: x runs at once, as if queued on the group
		// and popped by its claimer, which this worker now is.
		e.timerStarts(en)
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
		// A timer stays counted in timersWaiting until it starts:
		// meanwhile the group's batch ends (runGroup uncounts it).
		g.mu.Lock()
		g.q.Push(x)
		g.mu.Unlock()
		if g.scheduled.Add(1) > 1 {
			// Another worker holds the group and will run x after what
			// is ahead of it; this worker goes back to the run queue.
			return 0
		}
	}
	return n + e.runGroup(w, g)
}

// timerStarts uncounts en from timersWaiting if it is a timer: a timer
// taken from the run queue (popLocked) or a worker's runnable list
// (takeRunnable) is counted until it starts, or until it waits for a
// resource, so that the batches running meanwhile end for it.
func (e *Executor) timerStarts(en *entity) {
	if en.timer != nil {
		e.timersWaiting.Add(-1)
	}
}

// runGroup runs the callbacks queued on g, which this worker holds, until
// none is left, and returns the number of runs it made.
func (e *Executor) runGroup(w *worker, g *Group) int {
	n := 0
	for {
		if e.timers.Fast().Poll() { // as in next: this loop may run long
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
	// The run's context: done when the run ends, or at the drain
	// deadline (see Shutdown).
	w.run = w.slot.NewRun()
	more := false
	if w.reserves && en.timer == nil {
		defer e.timeRun(en, e.timers.Fast().Now())
	}
	if en.timer != nil {
		e.runTimer(w, x, en)
		w.nruns++
	} else {
		batch := w.batch
		if en.acq != nil {
			// A resource's release is due after each message.
			batch = 1
		}
		more = e.runMessages(w, x, en, batch)
	}
	if s := w.run.End(); s != nil {
		e.mute(x, en, s)
	}
	w.run = nil
	if en.acq != nil {
		e.release(en.acq, &w.runnable)
	}
	if e.obs != nil {
		e.obs.Observe(trace.Event{Op: trace.Finish, ID: x.ID(), Timer: x.Kind() == waitset.Timer, Worker: w.id})
	}
	if w.nruns-w.runs.Load() >= publishEvery {
		w.runs.Store(w.nruns)
	}
	if hold {
		if e.set.Fast().FinishHeld(x, more) {
			w.requeue = x
		}
		return
	}
	x.Finish(more)
}

// runTimer runs x's timer callback, unless the timer was canceled since it
// fell due.
func (e *Executor) runTimer(w *worker, x *waitset.Entity, en *entity) {
	ev, ok := timerq.Call(en.timer)
	if e.obs != nil {
		e.obs.Observe(trace.Event{Op: trace.Start, ID: x.ID(), Timer: x.Kind() == waitset.Timer, Worker: w.id})
	}
	if !ok {
		return
	}
	runs := e.opts.Runs
	if runs == nil {
		e.callTimer(w.run, en, ev)
		return
	}
	start := e.opts.Stamp()
	e.callTimer(w.run, en, ev)
	runs.Ran(Run{Worker: w.id, ID: x.ID(), Trigger: ev.Expected, Start: start, End: e.opts.Stamp()})
}

// mute mutes x, whose run published to the overloaded subscription s, until
// s drains (PostRun, docs/design.md, Resources): not if x is itself an
// overloaded subscription, or s is x, so that a cycle of publishers drains;
// nor if s drops when full and is of a lower priority than x: a callback
// does not wait for a queue that keeps the last messages of a lower
// priority's (docs/design.md, Priorities).
func (e *Executor) mute(x *waitset.Entity, en *entity, s *bus.Subscription) {
	if en.sub != nil && (en.sub == s || en.sub.Overloaded()) {
		return
	}
	if to, ok := bus.Entity(s).Data.(*entity); ok && to.priority < en.priority && s.Options().Overflow != bus.Block {
		return
	}
	bus.MuteUntilDrained(s, x)
}
