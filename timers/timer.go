package timers

import (
	"time"

	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/waitset"
)

// Event is what a timer callback receives.
type Event struct {
	// Expected is the deadline this call serves.
	Expected time.Time
	// Actual is when the call started.
	Actual time.Time
	// Missed counts the deadlines after Expected that had also passed when
	// the call started; they were skipped, not queued.
	Missed uint64
}

// Late returns how late the call started: Actual minus Expected.
func (ev Event) Late() time.Duration { return ev.Actual.Sub(ev.Expected) }

// Timer is a periodic or one-shot timer. Its methods are safe for
// concurrent use, also from its own callback.
type Timer struct {
	// t is the timer; a Timer is nothing else, so that robotexec's own
	// packages convert between the two (internal/facade).
	t timerq.Timer
}

// ID returns the timer's ID, its wait set entity's.
func (t *Timer) ID() uint64 { return t.t.ID() }

// Period returns the timer's period (the delay of a one-shot timer).
func (t *Timer) Period() time.Duration { return t.t.Period() }

// OneShot reports whether the timer fires once per arming.
func (t *Timer) OneShot() bool { return t.t.OneShot() }

// Calls counts the timer's calls.
func (t *Timer) Calls() uint64 { return t.t.Calls() }

// Missed counts the deadlines skipped because a call came more than a
// period late.
func (t *Timer) Missed() uint64 { return t.t.Missed() }

// Deadline returns the timer's next deadline, and false when it has none
// (canceled, or a one-shot timer that fired).
func (t *Timer) Deadline() (time.Time, bool) { return t.t.Deadline() }

// Cancel stops the timer: it fires no more until Reset. A call that is due
// but has not started is skipped.
func (t *Timer) Cancel() { t.t.Cancel() }

// Canceled reports whether the timer was canceled and not reset since.
func (t *Timer) Canceled() bool { return t.t.Canceled() }

// Reset restarts the timer from now: its next deadline is now plus the
// period (on Precise, rounded up to its grid). A canceled timer, or a
// one-shot timer that fired, is armed again.
func (t *Timer) Reset() { t.t.Reset() }

// ResetAt arms the timer for deadline; a deadline that has passed falls due
// at once. A periodic timer's later deadlines follow its period from it.
func (t *Timer) ResetAt(deadline time.Time) { t.t.ResetAt(deadline) }

// Entity returns the timer's wait set entity, which its deadline
// triggers.
func (t *Timer) Entity() *waitset.Entity { return timerq.Entity(&t.t) }

// Call serves the timer once its entity runs, in a scheduling loop of a
// program's own: it returns the event for the callback, and false when
// the call is to be skipped (the timer was canceled or reset since it fell
// due). A periodic timer is armed again for its next deadline.
func (t *Timer) Call() (Event, bool) {
	ev, ok := timerq.Call(&t.t)
	return Event(ev), ok
}

// Queue holds the deadlines of timers on one clock and triggers each timer
// into a wait set when its deadline comes: the executor has one, and so
// may a program with a scheduling loop of its own.
type Queue struct{ q *timerq.Queue }

// NewQueue returns a queue on clock c (nil means System) that triggers its
// timers into set.
func NewQueue(c Clock, set *waitset.Set) *Queue {
	return &Queue{timerq.NewQueue(clockOf(c), set)}
}

// NewTimer returns a timer of period (of delay, oneShot), armed from now
// and registered with the queue's wait set.
func (q *Queue) NewTimer(period time.Duration, oneShot bool) (*Timer, error) {
	t, err := q.q.NewTimer(period, oneShot)
	if err != nil {
		return nil, err
	}
	t.Reset()
	return timerOf(t), nil
}

// Stop stops the queue: its timers fire no more.
func (q *Queue) Stop() { q.q.Stop() }
