package observers

import (
	"sync"
	"time"
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

var (
	calibrateOnce sync.Once
	calibrated    float64 // ns per tick, 0 if the counter is not usable
)

// calibrateWindow is how long the counter is measured against the
// monotonic clock: the error is about 50 ns over it, 5 ppm.
const calibrateWindow = 10 * time.Millisecond

// newClock returns the time-stamp counter's clock if it is trusted (and
// monotonic is false), else the monotonic clock.
func newClock(monotonic bool) clock {
	if monotonic {
		return clock{scale: newScale(1)}
	}
	calibrateOnce.Do(func() {
		if !tscTrusted() {
			return
		}
		t0 := time.Now()
		c0 := rdtsc()
		var d time.Duration
		var c1 uint64
		for d < calibrateWindow {
			c1 = rdtsc()
			d = time.Since(t0)
		}
		f := float64(d) / float64(c1-c0)
		if f > 0.01 && f < 10 { // between 100 MHz and 100 GHz
			calibrated = f
		}
	})
	if calibrated == 0 {
		return clock{scale: newScale(1)}
	}
	return clock{tsc: true, scale: newScale(calibrated)}
}

// now returns the current time in ticks. It is small enough to inline:
// one call, to the counter or to monotonic.
func (c *clock) now() int64 {
	if c.tsc {
		return int64(rdtsc())
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
