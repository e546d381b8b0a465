package timerq

import (
	"time"

	"github.com/robotexec/robotexec/internal/tsc"
)

// rearm sets the alarm for the earliest deadline if it is not set for it.
func (q *Queue) rearm() {
	next, ok := q.head()
	if !ok {
		return
	}
	if q.armedAt.IsZero() || next.Before(q.armedAt) {
		q.early = q.lead > 0 && q.onEarly != nil
		if !q.early {
			q.arm(next, next)
			return
		}
		switch ahead := next.Sub(q.clock.Now()); {
		case ahead <= 0:
			// Due already: ring now.
			q.early = false
			q.arm(next, next)
		case ahead <= q.lead:
			// Within the lead already (deadlines close together):
			// the early ring is now, without the alarm's wake-up.
			q.early = false
			q.armFallback(next)
			q.onEarly(next, q.dueBy(q.key(next), earlyCount))
		default:
			// Far ahead, the machine may idle deeply meanwhile, and the
			// ring then comes late: ring earlier.
			q.armLead = q.lead
			if q.idleLead > q.lead && ahead > q.idleAfter {
				q.armLead = q.idleLead
			}
			q.arm(next, next.Add(-q.armLead))
		}
	}
}

// arm arms deadline d: the alarm is to ring at time at (set once q.mu is
// released, see unlock), and Poll's counter reading is set to d. q.mu
// must be held.
func (q *Queue) arm(d, at time.Time) {
	q.want(alarmWant{at: at})
	q.armPoll(d)
}

// fallbackLeads is the most leads after a polled deadline at which the
// alarm's fallback ring may come (armFallback).
const fallbackLeads = 4

// armFallback arms deadline d, which a worker polls for (the early ring
// has come), with the alarm as the fallback in case no Poll serves d: it
// rings between one and fallbackLeads leads after d. A setting already in
// that span is kept: in a run of deadlines a lead or so apart, as timers
// started together on a Precise clock's grid fall due, most deadlines
// then cost no setting of the alarm, a system call of 10-20 µs in a
// virtual machine that the first Call after a Poll's serve makes (see
// serve), which every timer of the group behind that Call waits for.
// q.mu must be held.
func (q *Queue) armFallback(d time.Time) {
	w := q.alarmState.want
	if !w.stop && !w.at.Before(d.Add(q.lead)) && !w.at.After(d.Add(fallbackLeads*q.lead)) {
		q.armPoll(d)
		return
	}
	q.arm(d, d.Add(fallbackLeads*q.lead))
}

// armPoll arms deadline d for Poll and staging, leaving the alarm's
// setting as it is. q.mu must be held.
func (q *Queue) armPoll(d time.Time) {
	q.armedAt = d
	if q.stageable() && len(q.staged) == 0 {
		q.stageKey.Store(q.key(d))
	}
	switch {
	case q.nsPerTick != 0:
		now, ticks := q.clock.Now(), tsc.Read()
		q.pollAt.Store(max(ticks+int64(float64(d.Sub(now))/q.nsPerTick), 1))
	case q.onClock:
		q.pollAt.Store(max(int64(d.Sub(q.base)), 1))
	}
}

// SetEarly asks the queue to call f with each deadline, lead ahead of it,
// on a clock with a lead (Precise: PreciseLead): from the alarm's
// goroutine, or from the call that arms a deadline already within the
// lead, with the queue's lock held: f must be quick and must not use the
// queue. The alarm then rings early, and again one to fallbackLeads leads
// after the deadline unless a Poll serves the deadline first (see
// armFallback): an executor uses it to have a worker running, polling,
// when the deadline comes, rather than waking one after it. Call it
// before arming timers.
func (x Fast) SetEarly(f func(deadline time.Time, due int)) {
	x.q.mu.Lock()
	defer x.q.mu.Unlock()
	x.q.onEarly = f
}

// Lead returns how long before a deadline SetEarly's function is called:
// the clock's lead, 0 when it has none.
func (x Fast) Lead() time.Duration { return x.q.lead }

// earlyCount is the most timers an early ring counts among those due at
// its deadline (SetEarly's due).
const earlyCount = 64
