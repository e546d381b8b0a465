package executor

import "github.com/robotexec/robotexec/waitset"

// Reserving a worker for a timer (Options.ReserveForTimers). The workers
// of Run measure each subscription callback's runs (timeRun); a worker
// about to start one of priority 0 holds it instead (holdForTimer) when
// the timer queue's armed deadline comes before the callback's expected
// end and no other worker is out of work to take the timer: it puts the
// callback back at the head of the run queue and polls until the
// deadline, when the timer is first in line. Another worker that frees
// meanwhile takes the callback (it finds this one out of work). A held
// callback is held again only within its expected run time from when
// it was first held, so it waits at most that long for timers.

// holdForTimer reports whether w, a worker that reserves, holds x, which
// it took from the run queue, for a timer: x is then back at the run
// queue's head and w the holder until the deadline (see countFree). Else
// it clears x's hold. e.mu must be held.
func (e *Executor) holdForTimer(w *worker, x *waitset.Entity) bool {
	en := x.Data.(*entity)
	if !e.holds(w, en) {
		en.heldSince = 0
		return false
	}
	e.putBack(x)
	return true
}

// putBack puts x, just taken from the head of the run queue's batch
// lane, back at its head. It moves the lane (a few entities: a hold
// comes while every other worker runs a callback). e.mu must be held.
func (e *Executor) putBack(x *waitset.Entity) {
	var l waitset.List
	l.Push(x)
	for y := e.runSubs.Pop(); y != nil; y = e.runSubs.Pop() {
		l.Push(y)
	}
	e.runSubs = l
}

// holds reports whether w is to hold en for the armed deadline, and
// makes w the holder until it, and sets en.heldSince, if so. e.mu must
// be held.
func (e *Executor) holds(w *worker, en *entity) bool {
	est := en.est.Load()
	others := e.nfree
	if w.free {
		others--
	}
	if en.timer != nil || en.priority > 0 || est == 0 || others > 0 {
		return false
	}
	f := e.timers.Fast()
	at := f.Armed()
	if at <= 1 {
		return false // none armed, or served and not yet re-armed
	}
	now := f.Now()
	if at-now >= est || now-at > f.Ticks(busyMargin) {
		// Due after the callback's expected end; or past for longer
		// than a poll takes to serve it.
		return false
	}
	if en.heldSince == 0 {
		en.heldSince = now
	} else if now-en.heldSince >= est {
		return false
	}
	e.holder, e.holdUntil = w, at
	e.nholds++
	return true
}

// countFree counts w, a worker that reserves, in Executor.nfree while it
// is out of work, and returns, if w holds a callback for a timer, until
// when it is to poll for it (the deadline and busyMargin), ending the
// hold; else 0. e.mu must be held.
func (e *Executor) countFree(w *worker, out bool) int64 {
	if out != w.free {
		w.free = out
		if out {
			e.nfree++
		} else {
			e.nfree--
		}
	}
	if e.holder != w {
		return 0
	}
	e.holder = nil
	return e.holdUntil + e.timers.Fast().Ticks(busyMargin)
}

// timeRun adds the run of en's callback that started at start, a reading
// of the timer queue's poll clock, to its mean run time: the last runs
// weigh most, each an eighth of the mean.
func (e *Executor) timeRun(en *entity, start int64) {
	d := e.timers.Fast().Now() - start
	if d <= 0 {
		return
	}
	if m := en.est.Load(); m != 0 {
		d = m + (d-m)/8
	}
	en.est.Store(d)
}
