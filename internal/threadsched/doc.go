// Package threadsched sets the OS scheduling of the calling thread:
// its nice value, Linux's real-time class, SCHED_FIFO, or the CPU it runs
// on. The executor's workers use it for Options.PriorityWorkers,
// Options.Realtime and Options.PinWorkers, and
// the bench and tests to learn whether the process may use the real-time
// class. A caller locks its goroutine to its thread first
// (runtime.LockOSThread) and never unlocks it, so that the thread ends
// with the goroutine instead of serving others at its new priority.
package threadsched
