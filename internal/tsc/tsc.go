// Package tsc reads the CPU's time-stamp counter, where it keeps time
// across the CPUs, as a clock cheaper than Go's monotonic one: about 10 ns
// a read against 26 ns on bare metal and 40-60 ns in a VM on kvm-clock,
// with no system call. It is trusted where the kernel keeps time with it,
// or where the kernel finds it constant-rate and the CPUs' counters agree
// (agree). Where it is not trusted but constant-rate, ReadOn reads it with
// the CPU it was read on, so that two readings on one CPU measure time
// (LocalNsPerTick).
//
// The environment variable ROBOTEXEC_TSC=off makes the counter untrusted,
// so that a machine that trusts it shows what robotexec does on one that
// does not: every clock read is then Go's monotonic clock.
package tsc

import (
	"sync"
	"sync/atomic"
	"time"
)

// Read returns the time-stamp counter, in ticks. It must be called only
// where NsPerTick is not 0.
func Read() int64 { return int64(rdtsc()) }

var (
	calibrateOnce sync.Once
	calibrated    float64     // ns per tick, 0 if the counter is not usable
	done          atomic.Bool // calibrated is set
	// first is the reading that begins a calibration in steps
	// (TryNsPerTick); nil until one began.
	first atomic.Pointer[reading]
	// trust caches trusted(), which reads a file.
	trust = sync.OnceValue(trusted)
)

// reading is a monotonic clock reading and the counter's at the same
// instant.
type reading struct {
	t time.Time
	c uint64
}

// calibrateWindow is how long the counter is measured against the
// monotonic clock: the error is about 50 ns over it, 5 ppm.
const calibrateWindow = 10 * time.Millisecond

// pair reads the monotonic clock between two readings of the counter, and
// again when they are far apart (the goroutine was held up meanwhile): a
// clock reading and the counter's at the same instant, within about 100
// ns.
func pair() (time.Time, uint64) {
	for i := 0; ; i++ {
		c0 := rdtsc()
		now := time.Now()
		c1 := rdtsc()
		// About 2 µs at 1 GHz; any pair after 100 tries.
		if c1-c0 < 2000 || i == 100 {
			return now, c0 + (c1-c0)/2
		}
	}
}

// NsPerTick returns the counter's period in nanoseconds, measured against
// the monotonic clock the first time it is called (which takes 10 ms, less
// what has passed since TryNsPerTick began a calibration), or 0 if the
// counter is not to be used: not amd64 Linux, or not trusted (see
// trusted).
func NsPerTick() float64 {
	calibrateOnce.Do(func() {
		defer done.Store(true)
		if trust() {
			calibrated = calibrate(first.Load())
		}
	})
	return calibrated
}

// calibrate measures the counter's period against the monotonic clock over
// calibrateWindow from r0, or from a reading of its own if r0 is nil; 0 if
// the result is not a counter's (outside 100 MHz to 100 GHz).
func calibrate(r0 *reading) float64 {
	if r0 == nil {
		t0, c0 := pair()
		r0 = &reading{t0, c0}
	}
	t1, c1 := pair()
	for t1.Sub(r0.t) < calibrateWindow {
		t1, c1 = pair()
	}
	f := float64(t1.Sub(r0.t)) / float64(c1-r0.c)
	if f > 0.01 && f < 10 {
		return f
	}
	return 0
}

// TryNsPerTick returns NsPerTick's value and true once the counter is
// calibrated, for a caller on a latency path that uses the monotonic clock
// meanwhile instead of waiting 10 ms. It calibrates in two steps, in its
// callers' goroutines: the first call takes a reading of both clocks and
// returns false; the first call 10 ms or more later takes the second
// reading and returns the result. Calls in between return false at once.
func TryNsPerTick() (float64, bool) {
	if done.Load() {
		return calibrated, true
	}
	if !trust() {
		return NsPerTick(), true // 0, at once
	}
	r0 := first.Load()
	if r0 == nil {
		t0, c0 := pair()
		first.CompareAndSwap(nil, &reading{t0, c0})
		return 0, false
	}
	if time.Since(r0.t) < calibrateWindow {
		return 0, false
	}
	return NsPerTick(), true
}
