package timerq

// Staged returns the number of q's timers staged ahead of their deadline
// and still armed (see stage).
func Staged(q *Queue) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.liveStaged()
}

// FallbackLeads is fallbackLeads, for the tests: the alarm's fallback
// ring after a deadline that a worker polls for comes that many leads
// after it, or sooner when already set (see armFallback).
const FallbackLeads = fallbackLeads
