package refsys

// DefaultCrunch is the crunch limit of every crunching node of the
// Autoware reference system (its default timing).
const DefaultCrunch = 4096

// Crunch counts the primes up to limit by trial division, as the
// original's number cruncher does: for each i from 2 to limit it tries
// the divisors 2 to i-1 and stops at the first that divides i. It is a
// fixed amount of work, not a time: Crunch(4096) is 564 on any machine,
// and takes as long as the machine needs: about 2.3 ms on a 2-vCPU AMD
// EPYC VM, where the original's README shows 0.23 ms for its C++ on its
// development machine. The division is on uint64, as the original's.
// A limit of 2 or less returns 2, as the original does.
func Crunch(limit uint64) int64 {
	if limit <= 2 {
		return 2
	}
	var primes int64
	for i := uint64(2); i <= limit; i++ {
		prime := true
		for n := uint64(2); n < i; n++ {
			if i%n == 0 {
				prime = false
				break
			}
		}
		if prime {
			primes++
		}
	}
	return primes
}
