package executor

import (
	"runtime"
	"time"
)

// A worker that runs out of work busy-waits before it sleeps: it polls the
// timers while a deadline is near (busyWait), and looks for new work a
// little while once per idle period (busyWaitIdle). "Spin" in this package
// means only the ROS-style Spin methods (spin.go).

// busyMargin is how long past a deadline a worker woken early for it
// polls, in case the counter's reading of the deadline is a little off.
const busyMargin = 20 * time.Microsecond

// early is the timer queue's early ring, a lead ahead of deadline, when
// due timers fall due at it: it wakes as many parked workers (of those
// that run timers), which, finding nothing to do, poll the timers until
// the deadline has passed (see waitLocked), so that at the deadline they
// are running instead of asleep. Waking a sleeping thread takes tens of
// microseconds, and on a VM whose other CPU idles often a millisecond;
// the lead covers the first. A worker for each timer, not one for all:
// timers that fall due together often start work that runs side by side
// (two sensors' timers, their two pipelines), whose second worker would
// otherwise start only when the first's publication woke it.
func (e *Executor) early(deadline time.Time, due int) {
	f := e.timers.Fast()
	e.busyUntil.Store(f.Now() + f.Ticks(time.Until(deadline)+busyMargin))
	e.wakeForTimers(due)
}

// busyWait polls the timers until the queue's poll clock (the counter, or
// the monotonic clock where the counter is not trusted) reaches until or
// work is ready, whichever is first.
func (e *Executor) busyWait(until int64) {
	f := e.timers.Fast()
	for f.Now() < until {
		f.PollWait()
		if !e.set.Empty() {
			return
		}
	}
}

// idleBusyWait is the longest a worker that runs out of work keeps looking
// for more, yielding its processor between looks, before it parks.
//
// Parking is cheap for the worker but not for the process: every wake-up
// of a parked worker makes the Go scheduler start a thread looking for
// work (a "spinning" thread in the runtime's terms), and on a machine with
// few cores those threads outnumber the cores, so the kernel preempts one
// for a whole time slice (4 ms here). A preempted worker in the middle of
// a callback holds its subscription, and per-topic order makes the
// subscription's messages wait for it: at a million messages a second on
// two workers, the p99 dispatch latency was 1–3 ms with parking at once,
// 3–30 µs with this busy-wait (internal/bench's LatencyExecutor).
//
// The busy-wait adapts, so that it costs little where it does not help:
// each worker shortens its wait by an eighth of idleBusyWait (down to
// minIdleBusyWait) when a wait ends without work, as under periodic
// timers, and waits the whole idleBusyWait again as soon as work comes
// during one, as under a dense stream of messages.
const idleBusyWait = 20 * time.Microsecond

// minIdleBusyWait is the shortest idle busy-wait: a look or two.
const minIdleBusyWait = time.Microsecond

// busyWaitIdle looks for work for about w.busyFor: a trigger into the wait
// set ends it. Work that other workers hold or queue does not, as they
// take it themselves. It adapts w.busyFor to what it found.
func (e *Executor) busyWaitIdle(w *worker) {
	if w.busyFor == 0 {
		w.busyFor = idleBusyWait
	}
	start := time.Now()
	for i := 0; ; i++ {
		// A deadline that passed while the worker ran callbacks, where
		// Poll between them does not read the clock (no trusted
		// counter): served here, before the worker parks.
		e.timers.Fast().PollWait()
		if !e.set.Empty() {
			w.busyFor = idleBusyWait
			return
		}
		if i%8 == 7 && time.Since(start) > w.busyFor {
			w.busyFor = max(w.busyFor-idleBusyWait/8, minIdleBusyWait)
			return
		}
		if !w.locked {
			// Goroutines this worker readied may wait on its
			// processor. A locked worker's Gosched would hand the
			// processor to another thread and wait to get it back
			// (two thread wake-ups, each a futex call): it only looks
			// again; another processor takes those goroutines.
			runtime.Gosched()
		}
	}
}
