package timerq

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/internal/tsc"
	"github.com/robotexec/robotexec/waitset"
)

// ErrStopped is returned when a timer is made on a stopped queue.
var ErrStopped = errors.New("timers: queue stopped")

// Queue keeps the deadlines of many timers in one heap and arms one alarm of
// its clock for the earliest; when it rings, the queue triggers every timer
// that is due into the wait set, as one step. Adding, canceling and serving
// a timer cost O(log n) in the number of armed timers; nothing scans them.
type Queue struct {
	clock Clock
	set   *waitset.Set
	// Periodic timers' first deadlines are multiples of grid, one-shot
	// deadlines of step; 0 means none. At most group timers start on one
	// deadline (0: no limit); starts counts them by deadline, for the
	// deadlines ahead (those past are dropped when it grows past
	// pruneAt). See start.
	grid, step time.Duration
	group      int
	starts     map[int64]int
	pruneAt    int

	// base is the origin of the heap's keys, read from the clock when
	// the queue was made.
	base time.Time

	mu   sync.Mutex
	heap []slot
	// timers holds each timer by its number (Timer.num), and pos its
	// heap position, -1 when it is not in the heap; free holds the
	// numbers of detached timers, for new ones. Kept apart from the
	// timers, so that moving slots touches these tables, not each moved
	// timer's memory: a group of timers taken out together rebuilds the
	// heap without a cache miss per timer left in it.
	pos     []int32
	timers  []*Timer
	free    []int32
	alarm   Alarm
	armedAt time.Time // the time the alarm is set for; zero when unset
	// alarmState holds the alarm's settings, made outside mu (alarm.go).
	alarmState alarmState
	stopped    bool
	// rewinds says the clock can go back (a RewindClock): only then is
	// a due timer whose deadline is ahead of the clock's time one that
	// the clock went back before (see Call). A clock that cannot
	// go back may serve a timer a little before its deadline (a poll
	// on another time source's reading).
	rewinds bool
	dueBuf  []*Timer
	fireBuf []*waitset.Entity
	// staged holds the timers of deadline stagedAt, taken out of the heap
	// ahead of it by a worker waiting for it (see stage); stageKey is the
	// key of the armed deadline that PollWait may stage, 0 for none.
	staged   []*Timer
	stagedAt time.Time
	stageKey atomic.Int64
	// Scratch of takeDue.
	dueSlots []slot
	stack    []int
	keys     []uint64
	sorted   []slot

	// nsPerTick is the time-stamp counter's period where the queue is
	// polled on the counter (see Fast.Poll), else 0. onClock reports that
	// it is polled on its clock's monotonic readings instead: a real-time
	// clock where the counter is not trusted, polled only by busy-waiting
	// workers (Fast.PollWait). pollAt is the reading, on the counter or
	// in nanoseconds from base on the clock, at the armed deadline; 0
	// when none is armed.
	nsPerTick float64
	onClock   bool
	pollAt    atomic.Int64

	// lead is how long before a deadline the alarm rings first, for
	// early (see Fast.SetEarly); 0 for none. early reports that the alarm is
	// set lead ahead of armedAt.
	lead    time.Duration
	onEarly func(deadline time.Time, due int)
	early   bool
	// idleLead replaces lead for a deadline more than idleAfter ahead
	// when it is armed (see Precise's IdleLead); armLead is the lead of
	// the early ring armed now.
	idleLead, idleAfter time.Duration
	armLead             time.Duration
}

// NewQueue returns a queue on clock c (nil means [System]) that triggers its
// timers into set.
func NewQueue(c Clock, set *waitset.Set) *Queue {
	if c == nil {
		c = System{}
	}
	q := &Queue{clock: c, set: set, base: c.Now()}
	if _, ok := c.(realTime); ok {
		q.nsPerTick = tsc.NsPerTick()
		q.onClock = q.nsPerTick == 0
	}
	if g, ok := c.(GridClock); ok {
		q.grid, q.step = g.Grid(), g.Grid()
	}
	if g, ok := c.(StepClock); ok {
		q.step, q.group = g.Step()
	}
	if l, ok := c.(LeadClock); ok {
		q.lead = l.Lead()
	}
	if l, ok := c.(IdleLeadClock); ok {
		q.idleLead, q.idleAfter = l.IdleLead()
	}
	q.alarm = c.NewAlarm(q.ring)
	if r, ok := c.(RewindClock); ok {
		r.OnRewind(q.rewound)
		q.rewinds = true
	}
	return q
}

// Clock returns the queue's clock.
func (q *Queue) Clock() Clock { return q.clock }

// NewTimer makes a timer and registers it with the queue's wait set. The
// timer is not armed: set the entity's Data, then call [Timer.Reset] to
// start it. A periodic timer first falls due one period after Reset, a
// one-shot timer after delay period. A periodic timer needs a positive
// period; a one-shot timer a delay of zero or more.
func (q *Queue) NewTimer(period time.Duration, oneShot bool) (*Timer, error) {
	if period <= 0 && !oneShot {
		return nil, fmt.Errorf("timers: period %v is not positive", period)
	}
	if period < 0 {
		return nil, fmt.Errorf("timers: delay %v is negative", period)
	}
	t := &Timer{q: q, period: period, oneShot: oneShot, state: idle}
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return nil, ErrStopped
	}
	if n := len(q.free); n > 0 {
		t.num, q.free = q.free[n-1], q.free[:n-1]
		q.pos[t.num], q.timers[t.num] = -1, t
	} else {
		t.num = int32(len(q.pos))
		q.pos, q.timers = append(q.pos, -1), append(q.timers, t)
	}
	q.mu.Unlock()
	q.set.Register(&t.ent, waitset.Timer)
	return t, nil
}

// Len returns the number of armed timers.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.heap) + q.liveStaged()
}

// Stop disarms every timer and the alarm, and closes the alarm if it can be
// closed (a Precise alarm's thread). When Stop returns, the queue triggers
// nothing more; timers already due may still be called once.
func (q *Queue) Stop() {
	q.mu.Lock()
	q.stopped = true
	for _, h := range q.heap {
		q.pos[h.num] = -1
		q.timer(h).state = idle
	}
	q.heap = nil
	for _, t := range q.staged {
		if t.state == staged {
			t.state = idle
		}
	}
	q.dropStaged()
	q.stageKey.Store(0)
	q.want(alarmWant{stop: true})
	q.armedAt = time.Time{}
	q.pollAt.Store(0)
	q.unlock()
	// Closed outside the lock: a ring under way, which Close waits for,
	// takes it.
	if c, ok := q.alarm.(io.Closer); ok {
		c.Close()
	}
}

// ring is the alarm's function: it triggers every timer that is due.
func (q *Queue) ring() { q.serve(false) }

// serve triggers every timer that is due, quietly (without the wait set's
// wake-up) for a Poll: the polling worker takes them itself. It returns
// the number it triggered.
func (q *Queue) serve(quiet bool) int {
	q.mu.Lock()
	defer q.unlock()
	if q.stopped {
		return 0
	}
	now := q.clock.Now()
	if d, ok := q.head(); q.early && ok && d.After(now) {
		if d.Sub(now) > q.armLead+q.armLead/2 {
			// Not the early ring of d: a ring that was under way when
			// a Poll served the previous deadline and set the alarm
			// for d, the early ring of a head that a Reset or a Cancel
			// since moved later, or a ring that came early. In the
			// last two, nothing is set for d any more (an alarm rings
			// once a setting): arm it again, which costs the first a
			// setting it had.
			q.armedAt = time.Time{}
			q.early = false
			q.rearm()
			return 0
		}
		q.early = false
		// The early ring: tell the executor, which puts a worker on a
		// processor for the deadline, and ring again after the
		// deadline, in case no worker polls (armFallback; the polling
		// worker arms the next deadline before that, see serve).
		q.armFallback(d)
		q.onEarly(d, q.dueBy(q.key(d), earlyCount))
		return 0
	}
	q.armedAt = time.Time{}
	q.early = false
	q.pollAt.Store(0)
	q.stageKey.Store(0)
	taken := q.takeDue(q.key(now), q.dueBuf[:0], due)
	taken = q.unstage(q.key(now), taken)
	fired := q.fireBuf[:0]
	for _, t := range taken {
		fired = append(fired, &t.ent)
	}
	clear(taken)
	q.dueBuf = taken[:0]
	// Triggering under the lock orders it before a concurrent Stop.
	if quiet {
		q.set.Fast().TriggerAllQuiet(fired)
	} else {
		q.set.TriggerAll(fired)
	}
	n := len(fired)
	clear(fired)
	q.fireBuf = fired[:0]
	if quiet && n > 0 {
		// Setting the alarm is a system call, 10-20 µs in a virtual
		// machine: it is left for after the trigger, so that a worker
		// waiting for the deadline may take the timers meanwhile. The
		// serving worker's next Poll sets it (pollAt 1 is always past),
		// or the first Call, whichever comes first.
		q.pollAt.Store(1)
		return n
	}
	q.rearm()
	return n
}
