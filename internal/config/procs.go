package config

import "runtime"

// checkProcs reports a negative executor.procs, and one below the workers
// in all where they run on threads of their own (priority or pinned
// workers), each of which needs a processor.
func (t *tree) checkProcs(e *Executor) {
	if e.Procs < 0 {
		t.errorAt("executor.procs", "must be 0 (robotexec chooses) or more, not %d", e.Procs)
		return
	}
	if e.Procs == 0 || (e.PriorityWorkers == 0 && !e.PinWorkers) {
		return
	}
	workers := e.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if all := workers + max(e.PriorityWorkers, 0); e.Procs < all {
		t.errorAt("executor.procs", "must be at least the workers in all (%d) with priority_workers or pin_workers, each on a thread of its own, not %d", all, e.Procs)
	}
}
