package bus

import (
	"context"
	"runtime"
)

// A publisher that finds a block queue at its depth yields its processor
// a few times before it waits (blockYields), looking for room after each.
// A queue fills when its publisher outpaces the workers, and they are
// draining it: room comes back within microseconds. Waiting on the
// queue's condition costs more than that: the publisher's goroutine parks,
// and the run that makes room wakes it, which sets it ready on the run's
// own processor, busy with the workers, until another processor takes it.
// Yielding instead lets a worker that waits for a processor run on the
// publisher's, so that the queue drains sooner. A queue that stays full
// (its callback runs long, its worker is held) makes the publisher wait
// after blockYields looks.
//
// In BenchmarkDispatch (executor/bench_test.go), whose publisher spent
// 9-22% of its time waiting on full queues direct and 4-7% via the bus
// (counted by a temporary test), the test binaries with and without the
// yields, alternated 12 times, gave these medians of the ratios to the
// chan pool of the same run, workers=2: direct 0.896 against 0.736, via
// the bus 0.695 against 0.593.
const blockYields = 64

// deliverFull is deliver to a queue that is full or closed, with s.mu
// held, which it releases: kept apart, so that the common case has no
// deferred call.
func (s *Subscription) deliverFull(ctx context.Context, m *Message, at stamp) (bool, error) {
	var stopWaking func() bool
	defer func() {
		if stopWaking != nil {
			stopWaking()
		}
	}()
	yields := 0
	for s.holds(s.opts.Depth) && !s.closed {
		switch s.opts.Overflow {
		case DropNewest:
			s.mu.Unlock()
			s.drop(QueueFull, 0)
			return false, nil
		case Block:
			if err := ctx.Err(); err != nil {
				s.mu.Unlock()
				return false, err
			}
			if yields < blockYields {
				yields++
				s.mu.Unlock()
				runtime.Gosched()
				s.mu.Lock()
				continue
			}
			if stopWaking == nil && ctx.Done() != nil {
				// ctx's end wakes the waiters, this one among them.
				stopWaking = context.AfterFunc(ctx, s.wakeWaiters)
			}
			// Counted before the queue is looked at again: a run that
			// takes a claimed message (Claim.Next) counts it, then
			// looks for waiters, so one of the two sees the other.
			s.waiters.Add(1)
			if s.holds(s.opts.Depth) {
				s.space.Wait()
			}
			s.waiters.Add(-1)
			continue
		default: // DropOldest
			s.dropOldestUntaken()
		}
	}
	if s.closed {
		s.mu.Unlock()
		s.drop(Closed, 0)
		return false, nil
	}
	s.makeRoom()
	s.accept(m, at, false)
	s.mu.Unlock()
	return true, nil
}

// wakeWaiters wakes the producers waiting for room, for one whose context
// is done.
func (s *Subscription) wakeWaiters() {
	s.mu.Lock()
	s.space.Broadcast()
	s.mu.Unlock()
}
