package executor

import (
	"time"

	"github.com/robotexec/robotexec/internal/tsc"
	"github.com/robotexec/robotexec/waitset"
)

// DefaultBatch is the most messages a subscription's run serves when
// Options.Batch is 0. Passing a subscription from worker to worker moves
// its cache lines between cores, which costs more than an empty callback;
// runs of up to 8 messages halve the dispatch cost of short callbacks
// (BENCHMARKS.md, dispatch throughput).
const DefaultBatch = 8

// DefaultBatchBudget is the BatchBudget of Options whose BatchBudget is 0.
const DefaultBatchBudget = 10 * time.Microsecond

// batchClock reads the clock that batches are timed on: the time-stamp
// counter where it is trusted, else the monotonic clock.
func (e *Executor) batchClock() int64 {
	if e.tscBatch {
		return tsc.Read()
	}
	return int64(time.Since(e.epoch))
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
	// The wait set first: popLocked counts the timers it takes before they
	// leave it.
	return now >= until || e.set.TimersPending() || e.timersWaiting.Load() != 0 ||
		(e.tscBatch && e.timers.Fast().Due(now)) || en.owner.tracked.Load()
}
