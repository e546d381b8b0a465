package timerq

// Staged returns the number of q's timers staged ahead of their deadline
// and still armed (see stage).
func Staged(q *Queue) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.liveStaged()
}
