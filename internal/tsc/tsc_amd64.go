package tsc

import (
	"os"
	"runtime"
	"slices"
	"strings"
)

// rdtsc reads the CPU's time-stamp counter.
func rdtsc() uint64

// rdtscOn reads the CPU's time-stamp counter between two readings of its
// TSC_AUX register (rdpid), where Linux keeps the CPU's number: they differ
// when the thread moved meanwhile.
func rdtscOn() (ticks uint64, before, after uint32)

// local reports whether the kernel finds the counter constant-rate and
// running in every CPU state, and the CPU has rdpid: readings on one CPU
// then measure time (see ReadOn).
func local() bool {
	if runtime.GOOS != "linux" {
		return false
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, value, _ := strings.Cut(line, ":")
		if strings.TrimSpace(name) == "flags" {
			f := strings.Fields(value)
			return slices.Contains(f, "constant_tsc") && slices.Contains(f, "nonstop_tsc") && slices.Contains(f, "rdpid")
		}
	}
	return false
}

// trusted reports whether the kernel keeps time with the time-stamp
// counter: it then found it invariant and synchronized across CPUs. With
// ROBOTEXEC_TSC=off it reports false.
func trusted() bool {
	if runtime.GOOS != "linux" || os.Getenv("ROBOTEXEC_TSC") == "off" {
		return false
	}
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	return err == nil && strings.TrimSpace(string(b)) == "tsc"
}
