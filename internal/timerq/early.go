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
			q.arm(next, next.Add(q.lead))
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
	q.armedAt = d
	q.want(alarmWant{at: at})
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
// queue. The alarm then rings early, and again a lead after the
// deadline unless a Poll serves the deadline first: an executor uses it
// to have a worker running, polling, when the deadline comes, rather than
// waking one after it. Call it before arming timers.
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
