package tsc

import (
	"sync"
	"time"
)

// Where the kernel does not keep time with the counter (a VM on
// kvm-clock), it may still tick at a constant rate in every CPU state on
// each CPU; only whether the CPUs' counters agree is not known. Two
// readings on the same CPU then measure the time between them, for about
// a third of the monotonic clock's cost (13 ns against 37 ns here):
// ReadOn returns the CPU with the reading, so that the caller can tell.

// NoCPU is ReadOn's CPU when the thread moved to another CPU while
// reading: the reading is then not to be compared with any other.
const NoCPU = ^uint32(0)

// ReadOn returns the time-stamp counter, in ticks, and the CPU it was
// read on (Linux's number of the CPU and its node, from rdpid), or NoCPU.
// It must be called only where LocalNsPerTick is not 0.
func ReadOn() (ticks int64, cpu uint32) {
	c, before, after := rdtscOn()
	if before != after {
		return int64(c), NoCPU
	}
	return int64(c), before
}

var (
	localOnce sync.Once
	localRate float64
)

// LocalNsPerTick returns the counter's period in nanoseconds for the
// difference of two ReadOn readings on the same CPU, measured the first
// time it is called (10 ms), or 0 if the counter is not to be used so: not
// amd64 Linux, or the kernel does not report it constant-rate and running
// in every CPU state (the constant_tsc and nonstop_tsc flags), or the CPU
// has no rdpid. Where NsPerTick is not 0 it returns NsPerTick.
func LocalNsPerTick() float64 {
	if f := NsPerTick(); f != 0 {
		return f
	}
	localOnce.Do(func() { localRate = calibrateLocal() })
	return localRate
}

// calibrateLocal measures the counter's period against the monotonic
// clock over calibrateWindow with both readings on one CPU, or returns 0
// where the counter cannot be used so.
func calibrateLocal() float64 {
	if !local() {
		return 0
	}
	// Both ends of the window must be read on one CPU: another's
	// counter may be offset.
	for range 8 {
		t0, c0, cpu0 := pairOn()
		t1, c1, cpu1 := pairOn()
		for cpu1 == cpu0 && t1.Sub(t0) < calibrateWindow {
			t1, c1, cpu1 = pairOn()
		}
		if cpu0 == NoCPU || cpu1 != cpu0 || c1 <= c0 {
			continue
		}
		if f := float64(t1.Sub(t0)) / float64(c1-c0); f > 0.01 && f < 10 {
			return f
		}
		return 0
	}
	return 0
}

// pairOn is pair on one CPU: the clock's reading between two of the
// counter on the same CPU, and that CPU, or NoCPU.
func pairOn() (time.Time, int64, uint32) {
	for i := 0; ; i++ {
		c0, cpu0 := ReadOn()
		now := time.Now()
		c1, cpu1 := ReadOn()
		if cpu0 != cpu1 || cpu0 == NoCPU {
			return now, 0, NoCPU
		}
		if c1-c0 < 2000 || i == 100 {
			return now, c0 + (c1-c0)/2, cpu0
		}
	}
}
