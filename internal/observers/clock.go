package observers

import (
	"time"

	"github.com/robotexec/robotexec/internal/tsc"
)

// clock reads a cheap monotonic time in ticks: the time-stamp counter when
// it is trusted, else nanoseconds of Go's monotonic clock.
type clock struct {
	tsc bool
	scale
}

// epoch is the origin of the monotonic fallback; time.Since reads only
// the monotonic clock when its argument carries a monotonic reading.
var epoch = time.Now()

// newClock returns the time-stamp counter's clock if it is trusted (and
// monotonic is false), else the monotonic clock.
func newClock(monotonic bool) clock {
	if !monotonic {
		if f := tsc.NsPerTick(); f != 0 {
			return clock{tsc: true, scale: newScale(f)}
		}
	}
	return clock{scale: newScale(1)}
}

// now returns the current time in ticks. It is small enough to inline:
// one call, to the counter or to monotonic.
func (c *clock) now() int64 {
	if c.tsc {
		return tsc.Read()
	}
	return monotonic()
}

// monotonic returns the nanoseconds of the monotonic clock since epoch.
//
//go:noinline
func monotonic() int64 { return int64(time.Since(epoch)) }

// source names the clock, for logs.
func (c *clock) source() string {
	if c.tsc {
		return "tsc"
	}
	return "monotonic"
}

// anchor pins Runs' clock to Go's monotonic clock, which messages'
// Received times and timers' deadlines are read on: a reading of both
// clocks at one moment, and the rate between them. A single calibration
// would not do: its error (parts per million) and NTP's slewing of the
// monotonic clock add up, over a day, to latencies off by a large part of
// a second. So Ran re-pins the clocks once they are anchorEvery apart,
// measuring the rate over the interval since the previous anchor.
type anchor struct {
	ticks     int64   // Runs' clock
	ns        int64   // Go's monotonic clock, in nanoseconds since Runs' originTime
	nsPerTick float64 // measured since the previous anchor
}

// anchorEvery is the longest time between anchors while runs are timed.
const anchorEvery = time.Second

// pairSlack is the longest a pair of readings (see readPair) may take, in
// nanoseconds: longer, the thread was interrupted and the pair is retried.
const pairSlack = 2000

// at returns the monotonic time of a reading of Runs' clock.
func (a *anchor) at(ticks int64) int64 {
	return a.ns + int64(float64(ticks-a.ticks)*a.nsPerTick)
}

// next returns the anchor that follows a at the pair (ticks, ns), with
// the rate measured between them; a rate more than 1% off the calibrated
// one (nominal) is taken for a bad reading and not used.
func (a *anchor) next(ticks, ns int64, nominal float64) *anchor {
	b := &anchor{ticks: ticks, ns: ns, nsPerTick: a.nsPerTick}
	if dt := ticks - a.ticks; dt > 0 {
		rate := float64(ns-a.ns) / float64(dt)
		if rate > nominal*0.99 && rate < nominal*1.01 {
			b.nsPerTick = rate
		}
	}
	return b
}

// readPair reads the clock c and the monotonic clock (nanoseconds since
// origin) at about one moment: the counter before and after, the
// monotonic clock between. It reports false if the three readings took
// longer than pairSlack, three times over.
func (c *clock) readPair(origin time.Time) (ticks, ns int64, ok bool) {
	for range 3 {
		t0 := c.now()
		ns = int64(time.Since(origin))
		t1 := c.now()
		if c.ns(t1-t0) <= pairSlack {
			return t0 + (t1-t0)/2, ns, true
		}
	}
	return 0, 0, false
}
