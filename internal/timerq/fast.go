package timerq

// Fast is package executor's path through a queue: the steps by which its
// workers serve the timers themselves, between callbacks, rather than
// wait for the alarm's goroutine (Poll, Due, Pollable), by which a
// worker is kept running when a deadline comes close (SetEarly, Lead),
// and by which one keeps itself for the next deadline (Armed, Now). A
// scheduler of one's own needs none of it: the alarm triggers every timer
// into the wait set.
//
// Get a Fast with [Queue.Fast]; it is a handle on the queue, free to make
// and to copy. The zero Fast is not usable.
type Fast struct{ q *Queue }

// Fast returns the executor's path through q.
func (q *Queue) Fast() Fast { return Fast{q} }
