package executor

import (
	"context"
	"slices"
	"sync"

	"github.com/robotexec/robotexec/internal/timerq"
)

// The executor's lifecycle is one state, Executor.state, of the values
// below. They are ordered: registrations are refused from stateClosing on
// (ErrClosed), and workers may retire from stateDraining on.
//
//	idle ──Spin──▶ spinning ──return──▶ idle
//	idle ──Run──▶ running ──ctx ends or Shutdown──▶ closing ──sources closed──▶ draining
//	     ──a worker finds nothing left──▶ drained ──workers exited──▶ closed
//	closed ──Spin──▶ spinningClosed ──return──▶ closed
//
// Who makes each transition, and under which lock its readers read it:
// Run and the Spin methods enter theirs by compare-and-swap from idle (or,
// for Spin, closed), so that a Spin during Run panics and a Run during Spin
// returns ErrRunning;
// stop enters closing under regMu, which registrations hold while they
// read the state and add their entity, so that every entity registered is
// closed by stop; stop enters draining under mu once the timers are
// stopped and the subscriptions closed, so that no worker retires while a
// source may still deliver; the first worker to find the executor drained
// enters drained under mu, where the other workers read it; Run enters
// closed once every worker has exited.
const (
	stateIdle           int32 = iota // new: Run or a Spin method may start
	stateSpinning                    // a Spin method runs on its caller
	stateRunning                     // Run's workers run callbacks
	stateClosing                     // Run's ctx ended or Shutdown: registrations refused, sources being closed
	stateDraining                    // sources closed: workers drain the queues, then retire
	stateDrained                     // a worker found nothing left: every worker retires
	stateClosed                      // Run returned
	stateSpinningClosed              // a Spin method runs on a closed executor
)

// shutdown is what Shutdown and Run share: Shutdown closes stopping once,
// and Run closes exited when its workers have exited. expire ends the
// runs' scope's Stop, the parent of every run's context, when a
// Shutdown's ctx ends before the drain does (the drain deadline).
type shutdown struct {
	once     sync.Once
	stopping chan struct{}
	exited   chan struct{}
	expire   context.CancelFunc
}

// Run runs callbacks on the worker pool until ctx ends or Shutdown is
// called, then stops: timers stop firing, subscriptions refuse new
// messages (counted as dropped, reason closed), and the workers drain
// every queue — each message accepted before the stop is run, each
// trigger before it is served. Run returns nil once the workers have
// exited. An executor runs once; a second Run returns ErrRunning, and so
// does a Run during a Spin call.
func (e *Executor) Run(ctx context.Context) error {
	if !e.state.CompareAndSwap(stateIdle, stateRunning) {
		return ErrRunning
	}
	if sim, ok := e.timers.Clock().(*timerq.Sim); ok {
		// The workers re-arm timers while another goroutine advances
		// the clock (Sim.FireReached).
		sim.FireReached()
	}
	var wg sync.WaitGroup
	e.mu.Lock()
	e.live = int32(len(e.workers))
	e.prio.partitioned = e.opts.PriorityWorkers > 0
	e.mu.Unlock()
	cpus := e.workerCPUs()
	for _, w := range e.workers {
		w.batch = e.opts.Batch
		w.reserves = e.opts.ReserveForTimers && !w.priority
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.startThread(w, cpus)
			e.work(w)
		}()
	}
	select {
	case <-ctx.Done():
	case <-e.shut.stopping:
	}
	e.stop()
	wg.Wait()
	e.mu.Lock()
	e.prio.partitioned = false // the Spin methods run every callback
	e.mu.Unlock()
	e.state.Store(stateClosed)
	close(e.shut.exited)
	return nil
}

// Shutdown stops the executor with net/http.Server.Shutdown's contract:
// Run stops as when its ctx ends — timers stop, subscriptions refuse new
// messages, the workers drain every queue — and Shutdown returns nil once
// Run's workers have exited, or ctx.Err() when ctx ends first. ctx's end
// is the drain deadline: the contexts of the callbacks running then, and
// of those that run later, are done (context.DeadlineExceeded), so that a
// long callback that watches its context can return; the drain carries on
// (a callback cannot be interrupted), and a later Shutdown waits for it
// again. Called before Run, it makes Run stop as
// soon as it starts, and waits for that; during a Spin call it returns
// ErrRunning at once and changes nothing. Called from a callback, it waits
// for that callback too, so only until ctx ends: a callback that stops its
// executor calls Shutdown on a goroutine of its own.
func (e *Executor) Shutdown(ctx context.Context) error {
	if e.state.Load() == stateSpinning {
		return ErrRunning // refused: nothing changes
	}
	e.shut.once.Do(func() { close(e.shut.stopping) })
	select {
	case <-e.shut.exited:
		return nil
	case <-ctx.Done():
		e.shut.expire()
		return ctx.Err()
	}
}

// stop closes the sources and tells the workers to drain and exit.
func (e *Executor) stop() {
	e.regMu.Lock()
	e.state.Store(stateClosing)
	ents := slices.Clone(e.entities) // forget may change e.entities meanwhile
	e.regMu.Unlock()
	e.timers.Stop()
	for _, en := range ents {
		if en.sub != nil {
			en.sub.Close()
		}
	}
	e.mu.Lock()
	e.state.Store(stateDraining)
	e.wakeAllLocked()
}

// retireLocked retires the calling worker once the executor has drained:
// it marks the executor drained, counts the worker out of the live ones,
// and wakes every parked worker, which then finds the executor drained and
// exits too. e.mu must be held; retireLocked releases it.
func (e *Executor) retireLocked() {
	e.state.Store(stateDrained)
	e.live--
	e.wakeAllLocked()
}
