package tracecheck

import (
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// groups checks that no two entities of one mutually exclusive group run at
// once.
func (c *checker) groups(steps []Step) {
	if len(c.m.Group) == 0 {
		return
	}
	running := map[string]uint64{} // group → entity running in it
	for _, s := range steps {
		g, ok := c.m.Group[s.ID]
		if !ok {
			continue
		}
		switch s.Op {
		case trace.Start:
			if other, busy := running[g]; busy {
				c.failf("step %d: entity %d starts while entity %d of group %q runs", s.Index, s.ID, other, g)
			}
			running[g] = s.ID
		case trace.Finish:
			if running[g] == s.ID {
				delete(running, g)
			}
		}
	}
}

// timersFirst checks that within each batch no timer follows a
// subscription.
func (c *checker) timersFirst(steps []Step) {
	sawSub := map[uint64]uint64{} // batch → a subscription in it
	for _, s := range steps {
		if s.Op != trace.Enqueue {
			continue
		}
		if s.Kind == waitset.Subscription {
			sawSub[s.Batch] = s.ID
		} else if sub, ok := sawSub[s.Batch]; ok {
			c.failf("step %d: timer %d enqueued after subscription %d in batch %d", s.Index, s.ID, sub, s.Batch)
		}
	}
}

// fifo checks that each subscription runs its messages in the order it
// accepted them, each once, and, once drained, that every accepted message
// was run or dropped by its policy.
func (c *checker) fifo(steps []Step) {
	type subState struct {
		accepted, last uint64
		done           map[uint64]string
	}
	subs := map[uint64]*subState{}
	get := func(id uint64) *subState {
		st := subs[id]
		if st == nil {
			st = &subState{done: map[uint64]string{}}
			subs[id] = st
		}
		return st
	}
	for _, s := range steps {
		if s.Kind != waitset.Subscription {
			continue
		}
		switch s.Op {
		case trace.Accept:
			st := get(s.ID)
			if s.Seq != st.accepted+1 {
				c.failf("step %d: subscription %d accepted message %d after %d", s.Index, s.ID, s.Seq, st.accepted)
			}
			st.accepted = s.Seq
		case trace.Start, trace.Next:
			if s.Seq == 0 {
				continue
			}
			st := get(s.ID)
			if s.Seq <= st.last {
				c.failf("step %d: subscription %d runs message %d after message %d", s.Index, s.ID, s.Seq, st.last)
			}
			if s.Seq > st.accepted {
				c.failf("step %d: subscription %d runs message %d before accepting it", s.Index, s.ID, s.Seq)
			}
			st.last = s.Seq
			if prev, dup := st.done[s.Seq]; dup {
				c.failf("step %d: subscription %d message %d run after it was %s", s.Index, s.ID, s.Seq, prev)
			}
			st.done[s.Seq] = "run"
		case trace.Drop:
			if s.Seq == 0 {
				continue
			}
			st := get(s.ID)
			if prev, dup := st.done[s.Seq]; dup {
				c.failf("step %d: subscription %d message %d dropped after it was %s", s.Index, s.ID, s.Seq, prev)
			}
			st.done[s.Seq] = "dropped"
		}
	}
	if !c.m.Drained {
		return
	}
	for id, st := range subs {
		for seq := uint64(1); seq <= st.accepted; seq++ {
			if _, ok := st.done[seq]; !ok {
				c.failf("subscription %d: accepted message %d was neither run nor dropped", id, seq)
			}
		}
	}
}
