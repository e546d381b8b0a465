package gcpace

import "time"

// Collections is collections, for the tests.
var Collections = collections

// SetPeriod makes Period d until the returned function restores it.
func SetPeriod(d time.Duration) (restore func()) {
	old := period.Swap(int64(d))
	return func() { period.Store(old) }
}
