package timers

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
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

	mu      sync.Mutex
	heap    []slot
	alarm   Alarm
	armedAt time.Time // the time the alarm is set for; zero when unset
	stopped bool
	dueBuf  []*waitset.Entity
	// Scratch of takeDue.
	dueSlots []slot
	stack    []int
	keys     []uint64
	sorted   []slot

	// nsPerTick is the time-stamp counter's period where the queue can be
	// polled (see Poll), else 0. pollAt is the counter's reading at the
	// armed deadline, 0 when none is armed.
	nsPerTick float64
	pollAt    atomic.Int64

	// lead is how long before a deadline the alarm rings first, for
	// early (see SetEarly); 0 for none. early reports that the alarm is
	// set lead ahead of armedAt.
	lead    time.Duration
	onEarly func(deadline time.Time)
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
	}
	if g, ok := c.(interface{ Grid() time.Duration }); ok {
		q.grid, q.step = g.Grid(), g.Grid()
	}
	if g, ok := c.(interface {
		Step() (step time.Duration, group int)
	}); ok {
		q.step, q.group = g.Step()
	}
	if l, ok := c.(interface{ Lead() time.Duration }); ok {
		q.lead = l.Lead()
	}
	if l, ok := c.(interface {
		IdleLead() (lead, after time.Duration)
	}); ok {
		q.idleLead, q.idleAfter = l.IdleLead()
	}
	q.alarm = c.NewAlarm(q.ring)
	return q
}

// start returns the first deadline of timer t started at now: now plus
// its period, rounded up to the clock's grid for a periodic timer, to its
// step for a one-shot timer, if it has them. Where the clock limits the
// timers that start on one deadline (Precise: PreciseGroup), a periodic
// timer whose grid point has as many already starts a step later, or the
// next step, and so on; it is counted on its deadline until it is reset,
// canceled or detached (uncount). q.mu must be held.
func (q *Queue) start(t *Timer, now time.Time) time.Time {
	if t.oneShot {
		d, _ := q.round(now.Add(t.period), q.step)
		return d
	}
	d, ok := q.round(now.Add(t.period), q.grid)
	if !ok || q.group <= 0 || q.step <= 0 {
		return d
	}
	if q.starts == nil {
		q.starts, q.pruneAt = make(map[int64]int), 64
	}
	if len(q.starts) >= q.pruneAt {
		// No timer starts on a deadline that has passed: forget them.
		past := q.key(now)
		for k := range q.starts {
			if k < past {
				delete(q.starts, k)
			}
		}
		q.pruneAt = max(64, 2*len(q.starts))
	}
	k := q.key(d)
	for q.starts[k] >= q.group && k <= math.MaxInt64-int64(q.step) {
		d = d.Add(q.step)
		k += int64(q.step)
	}
	q.starts[k]++
	t.counted = k
	return d
}

// uncount takes t off the count of the deadline it started on, if it is
// counted on one: it will not fall due there. q.mu must be held.
func (q *Queue) uncount(t *Timer) {
	if t.counted == 0 {
		return
	}
	if n, ok := q.starts[t.counted]; ok {
		if n <= 1 {
			delete(q.starts, t.counted)
		} else {
			q.starts[t.counted] = n - 1
		}
	}
	t.counted = 0
}

// round returns t rounded up to a multiple of g (none if g is 0), and
// whether it did: a time too close to the largest Duration from the
// queue's base (a delay meaning "never") is left as it is.
//
// The rounding is done on the queue's base: the deadline is the base plus
// a duration, so that timers rounded to the same point of the grid have
// the same deadline to the nanosecond. (Rounding each time's own wall
// reading would not: the wall clock drifts against the monotonic one,
// which orders the heap, by a few nanoseconds between two readings while
// NTP slews it, and the timers would fall due apart.)
func (q *Queue) round(t time.Time, g time.Duration) (time.Time, bool) {
	if g <= 0 {
		return t, false
	}
	// The offset from the base is rounded so that base's wall reading plus
	// it is a multiple of the grid; working on the offset, not on the sum,
	// nothing overflows.
	d := int64(t.Sub(q.base))
	if d > math.MaxInt64-int64(g) {
		return t, false
	}
	r := (q.base.UnixNano()%int64(g) + d%int64(g)) % int64(g)
	if r < 0 {
		r += int64(g)
	}
	if r != 0 {
		d += int64(g) - r
	}
	return q.base.Add(time.Duration(d)), true
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
	q.mu.Lock()
	stopped := q.stopped
	q.mu.Unlock()
	if stopped {
		return nil, ErrStopped
	}
	t := &Timer{q: q, period: period, oneShot: oneShot, index: -1, state: idle}
	q.set.Register(&t.Entity, waitset.Timer)
	return t, nil
}

// Len returns the number of armed timers.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.heap)
}

// Stop disarms every timer and the alarm, and closes the alarm if it can be
// closed (a Precise alarm's thread). When Stop returns, the queue triggers
// nothing more; timers already due may still be called once.
func (q *Queue) Stop() {
	q.mu.Lock()
	q.stopped = true
	for _, h := range q.heap {
		h.t.index = -1
		h.t.state = idle
	}
	q.heap = nil
	q.alarm.Stop()
	q.armedAt = time.Time{}
	q.pollAt.Store(0)
	q.mu.Unlock()
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
	defer q.mu.Unlock()
	if q.stopped {
		return 0
	}
	now := q.clock.Now()
	if q.early && len(q.heap) > 0 && q.heap[0].t.next.After(now) {
		d := q.heap[0].t.next
		if d.Sub(now) > q.armLead+q.armLead/2 {
			// Not the early ring of d: a ring that was under way when
			// a Poll served the previous deadline and set the alarm
			// for d, or the early ring of a head that a Reset or a
			// Cancel since moved later. In the latter case nothing
			// is set for d: arm it.
			if !q.armedAt.Equal(d) {
				q.armedAt = time.Time{}
				q.early = false
				q.rearm()
			}
			return 0
		}
		q.early = false
		// The early ring: tell the executor, which puts a worker on a
		// processor for the deadline, and ring again a lead after the
		// deadline, in case no worker polls (the polling worker sets
		// the alarm for the next deadline before that, see serve).
		q.arm(d, d.Add(q.lead))
		q.onEarly(d)
		return 0
	}
	q.armedAt = time.Time{}
	q.early = false
	q.pollAt.Store(0)
	fired := q.dueBuf[:0]
	fired = q.takeDue(q.key(now), fired)
	// Triggering under the lock orders it before a concurrent Stop.
	if quiet {
		q.set.TriggerAllQuiet(fired)
	} else {
		q.set.TriggerAll(fired)
	}
	n := len(fired)
	clear(fired)
	q.dueBuf = fired[:0]
	if quiet && n > 0 {
		// Setting the alarm is a system call, microseconds in a virtual
		// machine, which the timers just served would wait for: the
		// first of them to be called sets it, after reading its time
		// (Timer.Call), or else the next Poll (pollAt 1 is always
		// past).
		q.pollAt.Store(1)
		return n
	}
	q.rearm()
	return n
}

// takeDue takes the timers due at key now out of the heap, marks them due
// and appends them to fired in deadline order (by ID for equal deadlines).
// q.mu must be held.
//
// The due timers form a subtree at the heap's root, found in O(k) for k of
// them. Few are taken out one by one, O(k log n); many, as when timers
// started together fall due together, are sorted among themselves and the
// rest is rebuilt in place, O(k log k + n), touching each timer once
// instead of at every level of every removal.
func (q *Queue) takeDue(now int64, fired []*waitset.Entity) []*waitset.Entity {
	h := q.heap
	if len(h) == 0 || h[0].due > now {
		return fired
	}
	ds, stack := q.dueSlots[:0], append(q.stack[:0], 0)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i >= len(h) || h[i].due > now {
			continue
		}
		ds = append(ds, h[i])
		stack = append(stack, 2*i+1, 2*i+2)
	}
	q.stack = stack
	if len(ds)*bits.Len(uint(len(h))) < len(h) {
		for len(q.heap) > 0 && q.heap[0].due <= now {
			t := q.heap[0].t
			q.remove(t)
			t.state = due
			fired = append(fired, &t.Entity)
		}
	} else {
		q.sortSlots(ds)
		n := 0
		for _, x := range h {
			if x.due > now {
				h[n] = x
				x.t.index = n
				n++
			}
		}
		clear(h[n:])
		q.heap = h[:n]
		for i := n/2 - 1; i >= 0; i-- {
			q.down(i)
		}
		for _, x := range ds {
			x.t.index = -1
			x.t.state = due
			fired = append(fired, &x.t.Entity)
		}
	}
	clear(ds)
	q.dueSlots = ds[:0]
	return fired
}

// sortSlots sorts ds by deadline, then ID. Where the deadlines' spread,
// the IDs' spread and the positions fit in 64 bits together, as they do
// for timers started together on a grid, it sorts those as integers, a
// few times faster than comparing slots through a function.
func (q *Queue) sortSlots(ds []slot) {
	minDue, maxDue := ds[0].due, ds[0].due
	minID, maxID := ds[0].id, ds[0].id
	for _, x := range ds[1:] {
		minDue, maxDue = min(minDue, x.due), max(maxDue, x.due)
		minID, maxID = min(minID, x.id), max(maxID, x.id)
	}
	idxBits := bits.Len(uint(len(ds) - 1))
	idBits := bits.Len64(maxID - minID)
	dueBits := bits.Len64(uint64(maxDue - minDue))
	if idxBits+idBits+dueBits > 64 {
		slices.SortFunc(ds, func(a, b slot) int {
			if c := cmp.Compare(a.due, b.due); c != 0 {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})
		return
	}
	keys := q.keys[:0]
	for i, x := range ds {
		k := uint64(x.due-minDue)<<(idBits+idxBits) | (x.id-minID)<<idxBits | uint64(i)
		keys = append(keys, k)
	}
	slices.Sort(keys)
	sorted := append(q.sorted[:0], ds...)
	mask := uint64(1)<<idxBits - 1
	for i, k := range keys {
		ds[i] = sorted[k&mask]
	}
	clear(sorted)
	q.keys, q.sorted = keys, sorted[:0]
}

// rearm sets the alarm for the earliest deadline if it is not set for it.
func (q *Queue) rearm() {
	if len(q.heap) == 0 {
		return
	}
	next := q.heap[0].t.next
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
			q.onEarly(next)
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

// arm arms deadline d: the alarm is set to ring at time at, and Poll's
// counter reading to d. q.mu must be held.
func (q *Queue) arm(d, at time.Time) {
	q.armedAt = d
	q.alarm.Set(at)
	if q.nsPerTick != 0 {
		now, ticks := q.clock.Now(), tsc.Read()
		q.pollAt.Store(max(ticks+int64(float64(d.Sub(now))/q.nsPerTick), 1))
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
func (q *Queue) SetEarly(f func(deadline time.Time)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.onEarly = f
}

// Lead returns how long before a deadline SetEarly's function is called:
// the clock's lead, 0 when it has none.
func (q *Queue) Lead() time.Duration { return q.lead }

// Poll serves the timers that are due, as the alarm's ring does, if the
// armed deadline has passed, but without the wait set's wake-up: the
// caller is to take them (an executor's worker that finds more work than
// it takes wakes another). An executor's workers call it between
// callbacks: when every processor is busy, the thread that waits for the
// alarm may get one milliseconds late (the kernel's time slices, a virtual
// machine's), while a worker that finishes a callback is already running.
//
// It costs an atomic load when no timer is armed, and a read of the CPU's
// time-stamp counter when one is. It does nothing on a queue whose clock
// is not System or Precise (or a clock that embeds one), or where the
// counter is not trusted (see internal/tsc): there, only the alarm serves
// the timers.
//
// It reports whether it served anything: the caller is to take it, or to
// wake a worker that will.
func (q *Queue) Poll() bool {
	if at := q.pollAt.Load(); at != 0 {
		return q.poll(at)
	}
	return false
}

func (q *Queue) poll(at int64) bool {
	// One of the workers that find the deadline passed rings.
	if tsc.Read() >= at && q.pollAt.CompareAndSwap(at, 0) {
		return q.serve(true) > 0
	}
	return false
}

// Due reports whether Poll, called at time-stamp counter reading ticks
// (tsc.Read), would find a deadline passed: a timer is due that the alarm
// has not served yet. It costs an atomic load, and is false on a queue
// that is not Pollable.
func (q *Queue) Due(ticks int64) bool {
	at := q.pollAt.Load()
	return at != 0 && ticks >= at
}

// Pollable reports whether Poll can serve the queue: its clock is System
// or Precise (or embeds one) and the time-stamp counter is trusted.
func (q *Queue) Pollable() bool { return q.nsPerTick != 0 }

// push arms t at t.next. q.mu must be held.
func (q *Queue) push(t *Timer) {
	t.state = armed
	t.index = len(q.heap)
	q.heap = append(q.heap, slot{due: q.key(t.next), id: t.ID(), t: t})
	q.up(t.index)
	q.rearm()
}

// remove takes t out of the heap if it is in it. q.mu must be held. The
// alarm is left as it is: a ring with nothing due only re-arms.
func (q *Queue) remove(t *Timer) {
	i := t.index
	if i < 0 {
		return
	}
	last := len(q.heap) - 1
	if i != last {
		q.swap(i, last)
	}
	q.heap[last] = slot{}
	q.heap = q.heap[:last]
	t.index = -1
	if i != last {
		q.down(i)
		q.up(i)
	}
}

// slot is a timer in the heap, with its ordering kept beside it: the
// heap's comparisons then read only the heap's own memory, not the timers'.
type slot struct {
	due int64  // the deadline: key(t.next)
	id  uint64 // equal deadlines fall due in the order the timers were made
	t   *Timer
}

// key returns the heap's key of time t: nanoseconds from the queue's base.
func (q *Queue) key(t time.Time) int64 { return int64(t.Sub(q.base)) }

func (q *Queue) less(i, j int) bool {
	a, b := &q.heap[i], &q.heap[j]
	return a.due < b.due || a.due == b.due && a.id < b.id
}

func (q *Queue) swap(i, j int) {
	q.heap[i], q.heap[j] = q.heap[j], q.heap[i]
	q.heap[i].t.index = i
	q.heap[j].t.index = j
}

func (q *Queue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q *Queue) down(i int) {
	n := len(q.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			return
		}
		q.swap(i, m)
		i = m
	}
}
