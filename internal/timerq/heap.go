package timerq

import (
	"cmp"
	"math/bits"
	"slices"
	"time"
)

// slot is a timer in the heap, with its ordering kept beside it: the
// heap's comparisons then read only the heap's own memory, not the timers'.
type slot struct {
	due int64  // the deadline: key(t.next)
	id  uint64 // equal deadlines fall due in the order the timers were made
	num int32  // the timer's number: q.timers[num] is the timer, q.pos[num] its position
}

// timer returns the timer of slot x. q.mu must be held.
func (q *Queue) timer(x slot) *Timer { return q.timers[x.num] }

// key returns the heap's key of time t: nanoseconds from the queue's base.
func (q *Queue) key(t time.Time) int64 { return int64(t.Sub(q.base)) }

// push arms t at t.next. q.mu must be held.
func (q *Queue) push(t *Timer) {
	t.state = armed
	i := len(q.heap)
	q.pos[t.num] = int32(i)
	q.heap = append(q.heap, slot{due: q.key(t.next), id: t.ID(), num: t.num})
	q.up(i)
	q.rearm()
}

// remove takes t out of the heap if it is in it. q.mu must be held. The
// alarm is left as it is: a ring with nothing due only re-arms.
func (q *Queue) remove(t *Timer) {
	i := int(q.pos[t.num])
	if i < 0 {
		return
	}
	last := len(q.heap) - 1
	if i != last {
		q.swap(i, last)
	}
	q.heap[last] = slot{}
	q.heap = q.heap[:last]
	q.pos[t.num] = -1
	if i != last {
		q.down(i)
		q.up(i)
	}
}

func (q *Queue) less(i, j int) bool {
	a, b := &q.heap[i], &q.heap[j]
	return a.due < b.due || a.due == b.due && a.id < b.id
}

func (q *Queue) swap(i, j int) {
	q.heap[i], q.heap[j] = q.heap[j], q.heap[i]
	q.pos[q.heap[i].num] = int32(i)
	q.pos[q.heap[j].num] = int32(j)
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

// countDue returns how many timers fall due by key due, at most limit:
// the slots of the heap's top with keys up to due. q.mu must be held.
func (q *Queue) countDue(due int64, limit int) int {
	h := q.heap
	n, stack := 0, append(q.stack[:0], 0)
	for len(stack) > 0 && n < limit {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i >= len(h) || h[i].due > due {
			continue
		}
		n++
		stack = append(stack, 2*i+1, 2*i+2)
	}
	q.stack = stack[:0]
	return n
}

// takeDue takes the timers due at key now out of the heap, puts them in
// state (due, or staged) and appends them to fired in deadline order (by
// ID for equal deadlines). q.mu must be held.
//
// The due timers form a subtree at the heap's root, found in O(k) for k of
// them. Few are taken out one by one, O(k log n); many, as when timers
// started together fall due together, are sorted among themselves and the
// rest is rebuilt in place, O(k log k + n). Either way the heap's moves
// touch its slots and the table of positions (Queue.pos), both
// contiguous, and of the timers only the k taken: after an idle period,
// when the timers' memory has left the caches, the timers left in the
// heap cost no cache miss each.
func (q *Queue) takeDue(now int64, fired []*Timer, state int) []*Timer {
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
			t := q.timer(q.heap[0])
			q.remove(t)
			t.state = state
			fired = append(fired, t)
		}
	} else {
		q.sortSlots(ds)
		n := 0
		for _, x := range h {
			if x.due > now {
				h[n] = x
				q.pos[x.num] = int32(n)
				n++
			}
		}
		clear(h[n:])
		q.heap = h[:n]
		for i := n/2 - 1; i >= 0; i-- {
			q.down(i)
		}
		for _, x := range ds {
			q.pos[x.num] = -1
			t := q.timer(x)
			t.state = state
			fired = append(fired, t)
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
