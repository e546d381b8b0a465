package bus

// canPrefetch reports whether the CPU has PREFETCHW. CPUs without it may
// treat the instruction as undefined, so prefetchSlot is not called there.
var canPrefetch = hasPrefetchW()

// hasPrefetchW reports whether CPUID lists PREFETCHW.
func hasPrefetchW() bool
