package executor

import (
	"runtime"

	"github.com/robotexec/robotexec/internal/threadsched"
)

// startThread gives w's goroutine a thread of its own when priority
// workers run or the workers are pinned: at nice workerNice unless w is a
// priority worker, on the CPU cpus[w.id mod len(cpus)] when pinned. The
// thread ends with the goroutine, which never unlocks it.
func (e *Executor) startThread(w *worker, cpus []int) {
	if e.opts.PriorityWorkers == 0 && !e.opts.PinWorkers {
		return
	}
	runtime.LockOSThread()
	w.locked = true
	if len(cpus) > 0 {
		if err := threadsched.Pin(cpus[w.id%len(cpus)]); err != nil {
			e.threadOnce.Do(func() { e.log.Warn("executor: a worker runs unpinned", "error", err) })
		}
	}
	if e.opts.PriorityWorkers == 0 {
		return
	}
	switch {
	case !w.priority:
		threadsched.Lower(workerNice)
	case e.opts.Realtime:
		if err := threadsched.Realtime(); err != nil {
			e.realtimeOnce.Do(func() {
				e.log.Warn("executor: the priority workers run without the real-time class", "error", err)
			})
		}
	}
}

// workerNice is the nice value of the threads of the workers other than
// the priority workers while those run: the OS gives a priority worker
// that wakes about 10 times their share of a core (Linux's weights).
const workerNice = 10

// workerCPUs returns the CPUs the workers are pinned to, one each in
// turn, with Options.PinWorkers: those the process may run on (Run's
// thread's affinity mask, as taskset set it), in ascending order. It
// returns nil without PinWorkers, or where the mask cannot be read, which
// it logs.
func (e *Executor) workerCPUs() []int {
	if !e.opts.PinWorkers {
		return nil
	}
	cpus, err := threadsched.Allowed()
	if err != nil {
		e.threadOnce.Do(func() { e.log.Warn("executor: the workers run unpinned", "error", err) })
	}
	return cpus
}
