package tracecheck

import "github.com/robotexec/robotexec/internal/trace"

// resources checks the invariants of docs/design.md, Resources, on the
// resource steps:
//   - UniqueAcquisition: a resource is held by one request at a time;
//   - FIFO per resource: requests acquire a resource in the order they
//     were queued on it;
//   - ordered acquisition: a run queues its requests in ascending resource
//     order, each after acquiring the one before;
//   - RunningImplication: a running entity holds every resource it
//     requested for the run, from its start to its finish, and releases
//     them only then;
//   - once drained, every request was acquired and released.
func (c *checker) resources(steps []Step) {
	holder := map[uint64]uint64{}      // resource → entity holding it
	queued := map[uint64][]uint64{}    // resource → entities queued on it, in order
	held := map[uint64][]uint64{}      // entity → resources held for its current run
	requested := map[uint64][]uint64{} // entity → resources requested for its current run
	running := map[uint64]bool{}
	for _, s := range steps {
		switch s.Op {
		case trace.Request, trace.Acquire, trace.Release:
			if s.Resource == 0 || s.Overloaded != 0 {
				c.failf("step %d: %s of entity %d names resource %d and overloaded subscription %d", s.Index, s.Op, s.ID, s.Resource, s.Overloaded)
			}
		}
		switch s.Op {
		case trace.Request:
			r := s.Resource
			if rs := requested[s.ID]; len(rs) > 0 {
				last := rs[len(rs)-1]
				if r <= last {
					c.failf("step %d: entity %d requests resource %d after %d: not ascending", s.Index, s.ID, r, last)
				}
				if hs := held[s.ID]; len(hs) == 0 || hs[len(hs)-1] != last {
					c.failf("step %d: entity %d requests resource %d before holding %d", s.Index, s.ID, r, last)
				}
			}
			requested[s.ID] = append(requested[s.ID], r)
			queued[r] = append(queued[r], s.ID)
		case trace.Acquire:
			r := s.Resource
			if h, busy := holder[r]; busy {
				c.failf("step %d: entity %d acquires resource %d held by entity %d", s.Index, s.ID, r, h)
			}
			if q := queued[r]; len(q) == 0 || q[0] != s.ID {
				c.failf("step %d: entity %d acquires resource %d out of FIFO order (queue %v)", s.Index, s.ID, r, first(q))
			} else {
				queued[r] = q[1:]
			}
			holder[r] = s.ID
			held[s.ID] = append(held[s.ID], r)
		case trace.Start:
			running[s.ID] = true
			if len(requested[s.ID]) != len(held[s.ID]) {
				c.failf("step %d: entity %d starts holding %v of its resources %v", s.Index, s.ID, held[s.ID], requested[s.ID])
			}
		case trace.Release:
			r := s.Resource
			if holder[r] != s.ID {
				c.failf("step %d: entity %d releases resource %d it does not hold", s.Index, s.ID, r)
			}
			if !running[s.ID] {
				c.failf("step %d: entity %d releases resource %d while not running", s.Index, s.ID, r)
			}
			delete(holder, r)
			held[s.ID] = remove(held[s.ID], r)
			requested[s.ID] = remove(requested[s.ID], r)
		case trace.Finish:
			if len(held[s.ID]) > 0 {
				c.failf("step %d: entity %d finishes still holding resources %v", s.Index, s.ID, held[s.ID])
			}
			delete(running, s.ID)
		}
	}
	if c.m.Drained {
		for r, q := range queued {
			if len(q) > 0 {
				c.failf("resource %d: requests of entities %v never acquired it", r, first(q))
			}
		}
		for r, x := range holder {
			c.failf("resource %d still held by entity %d", r, x)
		}
	}
}

// muting checks that a muted entity is not scheduled until unmuted, that
// its mute and its unmute name the same overloaded subscription, and, once
// drained, that every mute ended.
func (c *checker) muting(steps []Step) {
	type mute struct {
		at int    // the step of the mute
		by uint64 // the overloaded subscription
	}
	muted := map[uint64]mute{} // entity → its mute
	for _, s := range steps {
		switch s.Op {
		case trace.Mute:
			if m, ok := muted[s.ID]; ok {
				c.failf("step %d: entity %d muted again (muted at step %d)", s.Index, s.ID, m.at)
			}
			if s.Overloaded == 0 || s.Resource != 0 {
				c.failf("step %d: mute of entity %d names overloaded subscription %d and resource %d", s.Index, s.ID, s.Overloaded, s.Resource)
			}
			muted[s.ID] = mute{s.Index, s.Overloaded}
		case trace.Unmute:
			m, ok := muted[s.ID]
			if !ok {
				c.failf("step %d: entity %d unmuted while not muted", s.Index, s.ID)
			} else if s.Overloaded != m.by {
				c.failf("step %d: entity %d unmuted by subscription %d, muted by %d", s.Index, s.ID, s.Overloaded, m.by)
			}
			delete(muted, s.ID)
		case trace.Enqueue:
			if m, ok := muted[s.ID]; ok {
				c.failf("step %d: entity %d scheduled while muted (since step %d)", s.Index, s.ID, m.at)
			}
		}
	}
	if c.m.Drained {
		for id, m := range muted {
			c.failf("entity %d muted at step %d was never unmuted", id, m.at)
		}
	}
}

func remove(list []uint64, v uint64) []uint64 {
	for i, x := range list {
		if x == v {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

func first(q []uint64) []uint64 {
	if len(q) > 5 {
		return q[:5]
	}
	return q
}
