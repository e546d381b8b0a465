package bus

import (
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/internal/tsc"
)

// The router stamps every message with the time it entered the process
// (Message.Received). time.Now reads the wall clock and the monotonic
// clock, about 40 ns; even one clock read (about 26 ns here) is as much as
// the rest of a local publication, and slows a producer enough that the
// executor's workers catch up with it and serve its messages one by one
// instead of in batches, at a third of the throughput (the dispatch via bus metric). So
// now reads the CPU's time-stamp counter where it is trusted (about
// 10 ns; see internal/tsc), adding the ticks elapsed to an anchor taken with time.Now at
// most reanchor ago; elsewhere it adds the monotonic time elapsed since
// the anchor. Adding them, a multiplication and time.Time.Add, costs as
// much again, so a publication that only this process's subscriptions get
// keeps the reading raw (a stamp) until a worker takes the message, off
// the publisher's path.

// reanchor bounds how far a stamp's wall clock may lag a step of the
// system clock (an NTP correction, say), and how far the counter may
// drift from the monotonic clock between two anchors: each anchor
// measures the counter's period since the previous one, to within
// pairSlack over reanchor, 10 ppm, so that stamps stay within about
// 100 ns of the monotonic clock.
const reanchor = 10 * time.Millisecond

// pairSlack bounds the time between the two counter readings around an
// anchor's time.Now: an anchor whose readings are further apart (the
// goroutine was preempted) is taken again.
const pairSlack = 100 * time.Nanosecond

// clockAnchor pairs a time.Now reading with the counter's at the same
// instant.
type clockAnchor struct {
	t     time.Time
	ticks int64  // tsc.Read at t; 0 without the counter
	limit int64  // tsc.Read at which to re-anchor
	mul   uint64 // nanoseconds per tick, fixed point 32.32; 0 without the counter
}

// anchor is the current clockAnchor; nil until the first stamp.
var anchor atomic.Pointer[clockAnchor]

// newAnchor takes an anchor after prev (nil for the first).
func newAnchor(prev *clockAnchor) *clockAnchor {
	// Until the counter is calibrated (by a new anchor 10 ms or more after
	// the first; see tsc.TryNsPerTick), the monotonic clock serves: the
	// first stamps of a process never wait.
	ns, ok := tsc.TryNsPerTick()
	if !ok || ns == 0 {
		a := &clockAnchor{t: time.Now()}
		anchor.Store(a)
		return a
	}
	slack := int64(float64(pairSlack) / ns)
	var a clockAnchor
	for range 10 {
		c0 := tsc.Read()
		a.t = time.Now()
		c1 := tsc.Read()
		a.ticks = c0 + (c1-c0)/2
		if c1-c0 <= slack {
			break
		}
	}
	if prev != nil && prev.mul != 0 && a.ticks > prev.ticks {
		if d := a.t.Sub(prev.t); d >= reanchor/2 {
			ns = float64(d) / float64(a.ticks-prev.ticks)
		}
	}
	a.mul = uint64(ns * (1 << 32))
	a.limit = a.ticks + int64(float64(reanchor)/ns)
	anchor.Store(&a)
	return &a
}

// now returns the current time for stamping messages: within about 100 ns
// of the monotonic clock, its wall clock following a step of the system
// clock within reanchor.
func now() time.Time { return readStamp().time() }

// A stamp is a reading of now's clock not yet made a time.Time: the anchor
// it was taken against and the time since it, in the counter's ticks (in
// nanoseconds where the anchor has no counter). Making the time.Time (a
// multiplication and time.Time.Add) costs about as much again as the
// reading, so a publication that only subscriptions of this process get
// leaves it to the worker that takes the message (see accept, TakeInto
// and Claim.Next), off the publisher's path. The zero stamp is no
// reading.
type stamp struct {
	a *clockAnchor
	d int64
}

// readStamp reads now's clock.
func readStamp() stamp {
	a := anchor.Load()
	if a == nil {
		return stamp{a: newAnchor(nil)}
	}
	if a.mul == 0 {
		d := time.Since(a.t)
		if d >= reanchor {
			return stamp{a: newAnchor(a)}
		}
		return stamp{a, int64(d)}
	}
	c := tsc.Read()
	if c >= a.limit || c < a.ticks {
		return stamp{a: newAnchor(a)}
	}
	return stamp{a, c - a.ticks}
}

// time returns the time of the reading; st must not be zero.
func (st stamp) time() time.Time {
	if st.a.mul == 0 {
		return st.a.t.Add(time.Duration(st.d))
	}
	hi, lo := bits.Mul64(uint64(st.d), st.a.mul)
	return st.a.t.Add(time.Duration(hi<<32 | lo>>32))
}
