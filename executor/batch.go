package executor

import (
	"time"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/internal/tsc"
	"github.com/robotexec/robotexec/waitset"
)

// DefaultBatch is the most messages a subscription's run serves when
// Options.Batch is 0. A run's fixed costs (moving the subscription's cache
// lines to its worker, claiming under the queue's lock, a pass through the
// run queue) are spread over its messages; the budget (DefaultBatchBudget)
// still ends a run of callbacks that take time (docs/design.md, Scheduler
// model: message batches).
const DefaultBatch = 32

// DefaultBatchBudget is the BatchBudget of Options whose BatchBudget is 0.
const DefaultBatchBudget = 10 * time.Microsecond

// The clocks that batches are timed on (see batchClock).
const (
	onMonotonic = iota // time.Since(epoch)
	onTSC              // the time-stamp counter, trusted
	onCPU              // the time-stamp counter, on one CPU (tsc.ReadOn)
)

// batchClock reads the clock that batches are timed on, and the CPU it
// was read on where that matters (0 where it does not): the time-stamp
// counter where the kernel trusts it; else, where the counter ticks at a
// constant rate on each CPU, the counter with its CPU, whose readings
// measure time on that CPU only (tsc.ReadOn, about a third of time.Since's
// cost); else the monotonic clock.
func (e *Executor) batchClock() (now int64, cpu uint32) {
	switch e.batchOn {
	case onTSC:
		return tsc.Read(), 0
	case onCPU:
		return tsc.ReadOn()
	}
	return int64(time.Since(e.epoch)), 0
}

// runMessages runs the callback of x's front message, then of the messages
// behind it, up to batch in all, while the run has lasted less than
// Options.BatchBudget and no timer is due (see batchEnds). It reports
// whether messages remain. A run of one queued message takes it, under one
// hold of the queue's lock; a run of more claims them (runClaimed).
func (e *Executor) runMessages(w *worker, x *waitset.Entity, en *entity, batch int) bool {
	m, c := &w.msg, &w.claim
	seq, took, k, more := bus.TakeOrClaim(en.sub, batch, c, m)
	if k > 0 {
		return e.runClaimed(w, x, en, batch, k, more)
	}
	e.observe(w, x, trace.Start, seq)
	if !took {
		w.nruns++ // a run that found the queue empty counts
		return false
	}
	e.serve(w, x, en, m)
	// The callback had a copy; the payload must not live on here.
	m.Topic, m.Payload = "", nil
	return more
}

// serve runs en's callback on m, one run of w, recorded where Options.Runs
// asks.
func (e *Executor) serve(w *worker, x *waitset.Entity, en *entity, m *bus.Message) {
	if runs := e.opts.Runs; runs == nil {
		e.callMessage(w.run, en, m)
	} else {
		start := e.opts.Stamp()
		e.callMessage(w.run, en, m)
		runs.Ran(Run{Worker: w.id, ID: x.ID(), Trigger: m.Received, Start: start, End: e.opts.Stamp()})
	}
	w.nruns++
}

// batchEnds reports whether a subscription's batch ends after the callback
// that just ran: the run has lasted its budget (until, on batchClock, read
// on cpu), or, timed on one CPU's counter, runs on another CPU now (or
// moved while reading it), whose counter may not agree; a
// timer is due, in the wait set, or due and not yet served by the alarm,
// or taken from the wait set and not started (in the timer lane, or
// queued on a group); or a publication of the callback left a
// subscription overloaded, so that the callback is muted now (see run).
func (e *Executor) batchEnds(w *worker, until int64, cpu uint32) bool {
	if w.run.Overloaded() != nil {
		return true
	}
	now, on := e.batchClock()
	// The wait set first: popLocked counts the timers it takes before they
	// leave it.
	return now >= until || on != cpu || cpu == tsc.NoCPU || e.set.TimersPending() || e.timersWaiting.Load() != 0 ||
		(e.batchOn == onTSC && e.timers.Fast().Due(now))
}

// runClaimed runs the k messages claimed in w.claim, with more queued
// behind them or not, and goes on through claims (see bus.Claim): it
// releases them when the run ends, claiming more if it goes on, so that it
// holds the queue's lock twice a claim rather than once a message.
func (e *Executor) runClaimed(w *worker, x *waitset.Entity, en *entity, batch, k int, more bool) bool {
	m, c := &w.msg, &w.claim
	until, cpu := e.batchClock()
	until += e.budget
	op := trace.Start
	ran := 0
	for k > 0 {
		seq, ok := c.Next(m)
		if !ok {
			// The claim is served (or its rest dropped): release it and
			// claim what the run may still serve, if anything came
			// meanwhile.
			k, more = bus.Release(en.sub, c, batch-ran)
			continue
		}
		e.observe(w, x, op, seq)
		op = trace.Next
		e.serve(w, x, en, m)
		ran++
		if ran >= batch || e.batchEnds(w, until, cpu) {
			_, more = bus.Release(en.sub, c, 0)
			break
		}
	}
	if ran == 0 {
		// Publishers dropped every message claimed: a run that found the
		// queue empty counts.
		e.observe(w, x, trace.Start, 0)
		w.nruns++
	}
	// The callback had a copy; the payload must not live on here.
	m.Topic, m.Payload = "", nil
	return more
}

// observe tells the executor's observer, if any, of a step of w's run of x.
func (e *Executor) observe(w *worker, x *waitset.Entity, op trace.Op, seq uint64) {
	if e.obs != nil {
		e.obs.Observe(trace.Event{Op: op, ID: x.ID(), Timer: x.Kind() == waitset.Timer, Worker: w.id, Seq: seq})
	}
}
