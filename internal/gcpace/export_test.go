package gcpace

import "time"

// Collections is collections, for the tests.
var Collections = collections

// SetPeriod makes Period d until the returned function restores it.
func SetPeriod(d time.Duration) (restore func()) {
	old := period.Swap(int64(d))
	return func() { period.Store(old) }
}

// SetQuiet makes Quiet d until the returned function restores it.
func SetQuiet(d time.Duration) (restore func()) {
	old := quiet.Swap(int64(d))
	return func() { quiet.Store(old) }
}
