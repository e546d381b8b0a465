package tsc

import (
	"os"
	"runtime"
	"strings"
)

// rdtsc reads the CPU's time-stamp counter.
func rdtsc() uint64

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
