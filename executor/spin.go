package executor

import (
	"context"

	"github.com/robotexec/robotexec/waitset"
)

// The Spin methods run callbacks on the calling goroutine, one at a time, as
// a ROS single-threaded executor's spin_once and spin_some do. They are for
// tests and for programs that drive the executor from their own loop: with a
// simulated clock, advance the clock, then spin. They panic if called while
// Run is running or from two goroutines at once.

// enterSpin marks a Spin method running, from idle or closed, and returns
// the state leaveSpin restores.
func (e *Executor) enterSpin() (prev int32) {
	switch {
	case e.state.CompareAndSwap(stateIdle, stateSpinning):
		prev = stateIdle
	case e.state.CompareAndSwap(stateClosed, stateSpinningClosed):
		prev = stateClosed
	default:
		panic("executor: spin while running or spinning")
	}
	e.workers[0].batch = 1 // SpinOnce runs one callback
	e.workers[0].reserves = false
	return prev
}

func (e *Executor) leaveSpin(prev int32) {
	e.workers[0].publish()
	e.state.Store(prev)
}

// SpinOnce runs one callback, waiting for one to become ready until ctx
// ends. It returns nil after a run and ctx.Err() if none became ready.
func (e *Executor) SpinOnce(ctx context.Context) error {
	defer e.leaveSpin(e.enterSpin())
	w := e.workers[0]
	for {
		if x := e.next(w, false); x != nil {
			e.dispatch(w, x)
			e.mu.Lock()
			e.holdLocked(w)
			e.mu.Unlock()
			return nil
		}
		e.mu.Lock()
		if !e.parkLocked(w) {
			continue
		}
		select {
		case <-w.wake:
		case <-ctx.Done():
			e.takeBack(w)
			return ctx.Err()
		}
	}
}

// SpinSome runs the callbacks that are ready now, without waiting, and
// returns how many ran. Callbacks that become ready meanwhile wait for the
// next call.
func (e *Executor) SpinSome() int {
	defer e.leaveSpin(e.enterSpin())
	return e.spinSome()
}

func (e *Executor) spinSome() int {
	w := e.workers[0]
	e.mu.Lock()
	if e.runTimers.Len()+e.runSubs.Len() == 0 {
		e.takeBatchLocked(false)
	}
	var urgent waitset.List
	e.set.Fast().TakeAhead(&e.runTimers, &urgent)
	e.takeUrgentLocked(&urgent)
	k := e.queuedLocked()
	e.mu.Unlock()
	n := 0
	for range k {
		x := e.next(w, false)
		if x == nil {
			break
		}
		n += e.dispatch(w, x)
	}
	e.mu.Lock()
	e.holdLocked(w)
	e.mu.Unlock()
	return n
}

// SpinAll runs callbacks until none is ready and returns how many ran. It
// does not return while callbacks keep making each other ready.
func (e *Executor) SpinAll() int {
	defer e.leaveSpin(e.enterSpin())
	n := 0
	for {
		k := e.spinSome()
		if k == 0 {
			e.mu.Lock()
			empty := e.queuedLocked()+e.held.Len() == 0 && e.set.Empty()
			e.mu.Unlock()
			if empty {
				return n
			}
		}
		n += k
	}
}
