// Package threadsched sets the OS scheduling of the calling thread:
// its nice value, or Linux's real-time class, SCHED_FIFO. The executor's
// workers use it for Options.PriorityWorkers and Options.Realtime, and
// the bench and tests to learn whether the process may use the real-time
// class. A caller locks its goroutine to its thread first
// (runtime.LockOSThread) and never unlocks it, so that the thread ends
// with the goroutine instead of serving others at its new priority.
package threadsched
