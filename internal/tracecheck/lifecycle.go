package tracecheck

import "github.com/robotexec/robotexec/waitset"

// lifecycle checks that each entity's scheduling steps follow
// (Enqueue Dequeue Start Finish)*: never queued twice, never running twice
// at once, and, once drained, back in waiting. Ready steps are observed just
// after the fact and may trail the steps they enable; they are matched by
// count: an entity is enqueued once per time it became ready.
func (c *checker) lifecycle(steps []Step) {
	next := map[uint64]waitset.Op{}
	readies := map[uint64]int{}
	enqueues := map[uint64]uint64{}
	type run struct {
		worker, messages int
		empty            bool // a subscription's run that found no message
	}
	runs := map[uint64]run{}    // entity → its current run
	running := map[int]uint64{} // worker → the entity it runs
	for _, s := range steps {
		switch s.Op {
		case waitset.Accept, waitset.Drop, waitset.Request, waitset.Acquire, waitset.Release, waitset.Mute, waitset.Unmute, waitset.Echo:
			continue
		case waitset.Ready:
			readies[s.ID]++
			continue
		case waitset.Enqueue:
			enqueues[s.ID]++
			if s.Seq != enqueues[s.ID] {
				c.failf("step %d: entity %d enqueued for readiness %d, want %d", s.Index, s.ID, s.Seq, enqueues[s.ID])
			}
		case waitset.Start:
			if other, busy := running[s.Worker]; busy {
				c.failf("step %d: entity %d starts on worker %d, which runs entity %d", s.Index, s.ID, s.Worker, other)
			}
			running[s.Worker] = s.ID
			runs[s.ID] = run{worker: s.Worker, messages: 1, empty: s.Kind == waitset.Subscription && s.Seq == 0}
		case waitset.Next:
			// A batch: the run goes on with the next message, on the
			// same worker, up to the batch's bound.
			r, running := runs[s.ID]
			switch {
			case s.Kind != waitset.Subscription:
				c.failf("step %d: entity %d (%v): next in a run of a timer", s.Index, s.ID, s.Kind)
			case !running || next[s.ID] != waitset.Finish:
				c.failf("step %d: entity %d: next outside a run", s.Index, s.ID)
			case r.worker != s.Worker:
				c.failf("step %d: entity %d: next on worker %d in a run on worker %d", s.Index, s.ID, s.Worker, r.worker)
			case r.messages >= c.m.Batch:
				c.failf("step %d: entity %d: run serves more than %d messages", s.Index, s.ID, c.m.Batch)
			case r.empty:
				c.failf("step %d: entity %d: next in a run that found its queue empty", s.Index, s.ID)
			case s.Seq == 0:
				c.failf("step %d: entity %d: next without a message", s.Index, s.ID)
			}
			r.messages++
			runs[s.ID] = r
			continue
		case waitset.Finish:
			if r, ok := runs[s.ID]; ok && r.worker != s.Worker {
				c.failf("step %d: entity %d finishes on worker %d a run started on worker %d", s.Index, s.ID, s.Worker, r.worker)
			}
			if running[s.Worker] == s.ID {
				delete(running, s.Worker)
			}
			delete(runs, s.ID)
		}
		want, ok := next[s.ID]
		if !ok {
			want = waitset.Enqueue
		}
		if s.Op != want {
			c.failf("step %d: entity %d (%v): %v, want %v", s.Index, s.ID, s.Kind, s.Op, want)
		}
		next[s.ID] = after(s.Op)
	}
	if c.m.Drained {
		for id, want := range next {
			if want != waitset.Enqueue {
				c.failf("entity %d did not drain: next step would be %v", id, want)
			}
		}
		for id, n := range readies {
			if enqueues[id] != uint64(n) {
				c.failf("entity %d became ready %d times and was enqueued %d times", id, n, enqueues[id])
			}
		}
	}
}

func after(op waitset.Op) waitset.Op {
	switch op {
	case waitset.Enqueue:
		return waitset.Dequeue
	case waitset.Dequeue:
		return waitset.Start
	case waitset.Start:
		return waitset.Finish
	}
	return waitset.Enqueue
}
