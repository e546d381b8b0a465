package executor

func (w *worker) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// wake is the wait set's hook: it unparks one idle worker, if any, after an
// entity became ready.
func (e *Executor) wake() {
	if e.nidle.Load() == 0 {
		return
	}
	e.mu.Lock()
	if e.prio.partitioned {
		e.wakeForLocked()
		e.mu.Unlock()
		return
	}
	w := e.popIdle()
	e.mu.Unlock()
	if w != nil {
		e.wakeups.Add(1)
		w.signal()
	}
}

// wakeForTimers wakes up to n parked workers of those that run timers
// (not the priority workers), the most recently parked first, for n
// timers about to fall due (see early).
func (e *Executor) wakeForTimers(n int) {
	if e.nidle.Load() == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for range n {
		if !e.wakeIdleLocked(false) {
			return
		}
	}
}

// popIdle takes the most recently parked worker: its cache is the warmest.
// e.mu must be held.
func (e *Executor) popIdle() *worker {
	n := len(e.idle)
	if n == 0 {
		return nil
	}
	w := e.idle[n-1]
	e.idle[n-1] = nil
	e.idle = e.idle[:n-1]
	e.nidle.Add(-1)
	return w
}

// unpark removes w from the idle stack if it is there. e.mu must be held.
func (e *Executor) unpark(w *worker) bool {
	for i, x := range e.idle {
		if x == w {
			copy(e.idle[i:], e.idle[i+1:])
			e.idle[len(e.idle)-1] = nil
			e.idle = e.idle[:len(e.idle)-1]
			e.nidle.Add(-1)
			return true
		}
	}
	return false
}

// waitLocked waits for work for w, which found none: while a deadline is
// near it polls the timers; once per idle period it looks for work a little
// while (see idleBusyWait); else it parks w until a trigger wakes it. e.mu
// must be held; waitLocked releases it.
func (e *Executor) waitLocked(w *worker) {
	if until := e.busyUntil.Load(); until != 0 && e.timers.Fast().Now() < until {
		// A deadline is near: poll for it rather than sleep.
		e.mu.Unlock()
		e.busyWait(until)
		return
	}
	if !w.busyWaited {
		// Out of work: look for more a little while before
		// sleeping, once per idle period (see idleBusyWait).
		w.busyWaited = true
		e.mu.Unlock()
		e.busyWaitIdle(w)
		return
	}
	w.busyWaited = false
	if e.parkLocked(w) {
		<-w.wake
	}
}

// parkLocked pushes w on the idle stack, for a trigger to wake, and
// reports whether w is to wait for that wake-up: false when work came in
// meanwhile and w took itself back off the stack. e.mu must be held;
// parkLocked releases it.
func (e *Executor) parkLocked(w *worker) bool {
	e.idle = append(e.idle, w)
	e.nidle.Add(1)
	e.mu.Unlock()
	// A trigger that pushed before nidle grew did not see w parked;
	// look again before sleeping. Triggers push, then read nidle;
	// here nidle grew, then the set is read: one of the two sees the
	// other.
	if !e.set.Empty() {
		e.takeBack(w)
		return false
	}
	return true
}

// takeBack takes w, which does not wait for its wake-up after all, off
// the idle stack. When a trigger popped w first, its signal is on the way
// and w takes it: left in w.wake, it would end w's next park at once,
// with w still on the stack, and w would be on it twice the park after
// (found by the model, model/README.md).
func (e *Executor) takeBack(w *worker) {
	e.mu.Lock()
	on := e.unpark(w)
	e.mu.Unlock()
	if !on {
		<-w.wake
	}
}

// wakeAllLocked empties the idle stack and wakes every worker that was on
// it. e.mu must be held; wakeAllLocked releases it.
func (e *Executor) wakeAllLocked() {
	idle := e.idle
	e.idle = nil
	e.nidle.Store(0)
	e.mu.Unlock()
	for _, w := range idle {
		w.signal()
	}
}
