package tsc

import (
	"os"
	"runtime"
	"slices"
	"strings"
)

// rdtsc reads the CPU's time-stamp counter.
func rdtsc() uint64

// rdtscOrdered reads it after the loads before it.
func rdtscOrdered() uint64

// rdtscOn reads the CPU's time-stamp counter between two readings of its
// TSC_AUX register (rdpid), where Linux keeps the CPU's number: they differ
// when the thread moved meanwhile.
func rdtscOn() (ticks uint64, before, after uint32)

// local reports whether the kernel finds the counter constant-rate and
// running in every CPU state, and the CPU has rdpid: readings on one CPU
// then measure time (see ReadOn).
func local() bool {
	f := cpuFlags()
	return slices.Contains(f, "constant_tsc") && slices.Contains(f, "nonstop_tsc") && slices.Contains(f, "rdpid")
}

// invariant reports whether the kernel finds the counter constant-rate
// and running in every CPU state.
func invariant() bool {
	f := cpuFlags()
	return slices.Contains(f, "constant_tsc") && slices.Contains(f, "nonstop_tsc")
}

// cpuFlags returns the first CPU's flags in /proc/cpuinfo (Linux).
func cpuFlags() []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, value, _ := strings.Cut(line, ":")
		if strings.TrimSpace(name) == "flags" {
			return strings.Fields(value)
		}
	}
	return nil
}

// trusted reports whether the counter keeps time across CPUs: the kernel
// keeps time with it (it then found it invariant and synchronized across
// CPUs), or the kernel finds it constant-rate and running in every CPU
// state and the CPUs' counters agree (agree; a VM on kvm-clock). With
// ROBOTEXEC_TSC=off it reports false.
func trusted() bool {
	if runtime.GOOS != "linux" || os.Getenv("ROBOTEXEC_TSC") == "off" {
		return false
	}
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err == nil && strings.TrimSpace(string(b)) == "tsc" {
		return true
	}
	return invariant() && agree()
}
