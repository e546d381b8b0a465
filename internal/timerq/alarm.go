package timerq

import (
	"sync"
	"sync/atomic"
	"time"
)

// Setting the alarm outside the queue's lock. Setting a Precise alarm is a
// system call (timerfd_settime, 10-20 µs on a VM), and the queue's lock is
// what an executor's workers take to call each due timer (Call): a worker
// that finds it held waits for it in the runtime, and is made runnable
// again on the processor of the worker that unlocks, which goes on to run
// callbacks; it runs once another thread takes it from there, which took
// milliseconds on a 2-vCPU VM: 12-98 Calls in 20 s of the reference
// system waited more than 200 µs, the holder mostly a Poll's serve, while
// the alarm was set under the lock; none once it was set after. So the
// methods that arm record the setting they want under the lock (want),
// and the setting is made after it (unlock, flushAlarm), in the order
// wanted: the last wanted is the one left.

// alarmWant is a setting of the alarm: ring at at, or stop.
type alarmWant struct {
	at   time.Time
	stop bool
}

// alarmState is a queue's record of its alarm's settings.
type alarmState struct {
	want alarmWant     // the last setting wanted; Queue.mu guards it
	gen  atomic.Uint64 // settings wanted so far; written under Queue.mu
	seen uint64        // the last gen an unlock flushed; Queue.mu guards it

	mu   sync.Mutex // held while a setting is made
	made uint64     // the gen of the last setting made; mu guards it
}

// want records s as the alarm's setting, to be made once q.mu is
// released (unlock). q.mu must be held.
func (q *Queue) want(s alarmWant) {
	q.alarmState.want = s
	q.alarmState.gen.Add(1)
}

// unlock releases q.mu, then makes the alarm's setting if one was wanted
// under it.
func (q *Queue) unlock() {
	a := &q.alarmState
	gen := a.gen.Load()
	if gen == a.seen {
		q.mu.Unlock()
		return
	}
	a.seen = gen
	s := a.want
	q.mu.Unlock()
	q.flushAlarm(s, gen)
}

// flushAlarm makes setting s, wanted as the gen-th, or a later one, unless
// another goroutine is making one: that one then makes the last one after
// it, as it looks for a newer setting once it has made its own. q.mu must
// not be held.
func (q *Queue) flushAlarm(s alarmWant, gen uint64) {
	a := &q.alarmState
	for a.mu.TryLock() {
		if gen > a.made { // else a later one was made meanwhile
			if s.stop {
				q.alarm.Stop()
			} else {
				q.alarm.Set(s.at)
			}
			a.made = gen
		}
		a.mu.Unlock()
		// A setting wanted meanwhile, whose unlock found a.mu held,
		// is this goroutine's to make.
		if a.gen.Load() == gen {
			return
		}
		q.mu.Lock()
		s, gen = a.want, a.gen.Load()
		q.mu.Unlock()
	}
}
