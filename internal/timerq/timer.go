package timerq

import (
	"sync/atomic"
	"time"

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

// timer states, guarded by the queue's lock.
const (
	armed    = iota // in the heap, waiting for its deadline
	due             // triggered, waiting for its call
	idle            // canceled, or a one-shot that was called
	detached        // removed for good
	staged          // out of the heap ahead of its deadline (see Queue.stage)
)

// Timer is a periodic or one-shot timer. It holds the wait set entity that
// the executor schedules (Entity). Create timers with [Queue.NewTimer].
type Timer struct {
	ent waitset.Entity // first: its lines are the timer's first

	q       *Queue
	period  time.Duration
	oneShot bool

	// Guarded by q.mu.
	next time.Time
	// num is the timer's entry in the queue's tables of timers and heap
	// positions (Queue.timers, Queue.pos), given when it was made and
	// given back by Detach.
	num   int32
	state int
	// counted is the heap key of the first deadline the timer is counted
	// on in q.starts, 0 for none (see Queue.start).
	counted int64

	missed atomic.Uint64
	calls  atomic.Uint64
	_      [40]byte // to 256 bytes, a size class of whole cache lines
}

// ID returns the timer's ID: its callback's executor.Run.ID.
func (t *Timer) ID() uint64 { return t.ent.ID() }

// Entity returns t's wait set entity, which the executor schedules.
func Entity(t *Timer) *waitset.Entity { return &t.ent }

// Period returns the timer's period (the delay of a one-shot timer).
func (t *Timer) Period() time.Duration { return t.period }

// OneShot reports whether the timer fires once.
func (t *Timer) OneShot() bool { return t.oneShot }

// Missed returns the number of deadlines skipped since the timer was made.
func (t *Timer) Missed() uint64 { return t.missed.Load() }

// Calls returns the number of calls served.
func (t *Timer) Calls() uint64 { return t.calls.Load() }

// Deadline returns the timer's next deadline, and false if the timer is
// canceled or a one-shot timer that has been called.
func (t *Timer) Deadline() (time.Time, bool) {
	t.q.mu.Lock()
	defer t.q.mu.Unlock()
	if t.state == armed || t.state == due || t.state == staged {
		return t.next, true
	}
	return time.Time{}, false
}

// Canceled reports whether the timer will not fire again until reset.
func (t *Timer) Canceled() bool {
	t.q.mu.Lock()
	defer t.q.mu.Unlock()
	return t.state == idle || t.state == detached
}

// Cancel stops the timer: it does not fire again until [Timer.Reset], and a
// call that is due but has not started is skipped.
func (t *Timer) Cancel() {
	t.q.mu.Lock()
	defer t.q.unlock()
	if t.state == detached {
		return
	}
	t.q.remove(t)
	t.q.uncount(t)
	t.state = idle
}

// Reset restarts the timer from now: its next deadline is now plus the
// period (on a clock with a grid, rounded up to it: see Precise). A call
// that is due but has not started is skipped. Reset on a canceled timer,
// or a one-shot timer that fired, arms it again.
func (t *Timer) Reset() {
	q := t.q
	q.mu.Lock()
	defer q.unlock()
	if t.state == detached || q.stopped {
		return
	}
	q.remove(t)
	q.uncount(t)
	t.next = q.start(t, q.clock.Now())
	q.push(t)
}

// ResetAt arms the timer for deadline (on a clock with a grid, rounded up
// to it: see Precise); a deadline that has passed falls due at once. A
// call that is due but has not started is skipped. A periodic timer's
// later deadlines follow its period from deadline: replay uses it to put
// a timer's calls where a recorded run had them.
func (t *Timer) ResetAt(deadline time.Time) {
	q := t.q
	q.mu.Lock()
	defer q.unlock()
	if t.state == detached || q.stopped {
		return
	}
	q.remove(t)
	q.uncount(t)
	t.next, _ = q.round(deadline, q.step)
	q.push(t)
}

// Call serves a due timer; the executor calls it when the timer's callback
// starts. It returns the event for the callback, and false if the call must
// be skipped because the timer was canceled or reset since it fell due, or
// because its clock went back before its deadline since (see
// [RewindClock]: the timer is then re-armed).
// A periodic timer is re-armed for its first deadline that has not passed
// (one equal to now is due at once), skipping and counting the ones that
// already passed.
func Call(t *Timer) (Event, bool) {
	q := t.q
	now := q.clock.Now() // read outside the lock, which the ring holds long
	q.mu.Lock()
	if q.armedAt.IsZero() && !q.stopped {
		// A Poll served timers and left the alarm to be set after the
		// trigger (see serve), and this call comes first: it sets it,
		// outside the lock, and reads the time again, as its callback
		// starts after.
		q.rearm()
		q.unlock()
		now = q.clock.Now()
		q.mu.Lock()
	}
	defer q.unlock()
	if t.state != due {
		return Event{}, false
	}
	if q.rewinds && t.next.After(now) {
		// Read again under the lock: a Reset and a ring since now was
		// read may have made the timer due again, for a later deadline.
		now = q.clock.Now()
	}
	if q.rewinds && t.next.After(now) {
		// The clock went back before the deadline since the timer fell
		// due (a RewindClock set back): it is not due at this time. It
		// is re-armed as the queue re-arms its armed timers then.
		if q.stopped {
			t.state = idle
			return Event{}, false
		}
		q.rewind(t, now)
		q.push(t)
		return Event{}, false
	}
	ev := Event{Expected: t.next, Actual: now}
	t.calls.Add(1)
	if t.oneShot {
		t.state = idle
		return ev, true
	}
	t.counted = 0 // it fell due on its first deadline, if it was counted
	next := t.next.Add(t.period)
	if next.Before(now) {
		// rcl's rule: skip every deadline that has passed, count them. A
		// deadline equal to now has not passed: it is due, as in ring.
		skipped := uint64((now.Sub(next)-1)/t.period) + 1
		next = next.Add(time.Duration(skipped) * t.period)
		ev.Missed = skipped
		t.missed.Add(skipped)
	}
	t.next = next
	if q.stopped {
		t.state = idle
		return ev, true
	}
	q.push(t)
	return ev, true
}

// Detach removes the timer from its queue for good.
func Detach(t *Timer) {
	t.q.mu.Lock()
	defer t.q.unlock()
	if t.state == detached {
		return
	}
	t.q.remove(t)
	t.q.uncount(t)
	t.state = detached
	t.q.timers[t.num] = nil
	t.q.free = append(t.q.free, t.num)
}
