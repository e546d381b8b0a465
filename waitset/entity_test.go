package waitset_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// op is one step of a scripted entity life in TestEntityStateMachine.
type op int

const (
	opTrigger    op = iota // Trigger; want is 1 if it made the entity ready
	opTake                 // Set.Take; want is the number of entities taken
	opStart                // Start
	opFinish               // Finish(false); want is 1 if it made the entity ready
	opFinishMore           // Finish(true); want is 1 if it made the entity ready
)

type step struct {
	op    op
	want  int
	state waitset.State
	inSet bool
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestEntityStateMachine(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "trigger take start finish",
			steps: []step{
				{opTake, 0, waitset.Waiting, false},
				{opTrigger, 1, waitset.Waiting, true},
				{opTake, 1, waitset.Queued, false},
				{opStart, 0, waitset.Running, false},
				{opFinish, 0, waitset.Waiting, false},
				{opTake, 0, waitset.Waiting, false},
			},
		},
		{
			name: "triggers coalesce while waiting",
			steps: []step{
				{opTrigger, 1, waitset.Waiting, true},
				{opTrigger, 0, waitset.Waiting, true},
				{opTrigger, 0, waitset.Waiting, true},
				{opTake, 1, waitset.Queued, false},
				{opTake, 0, waitset.Queued, false},
				{opStart, 0, waitset.Running, false},
				{opFinish, 0, waitset.Waiting, false},
				{opTake, 0, waitset.Waiting, false},
			},
		},
		{
			name: "trigger while queued is kept and re-readies at finish",
			steps: []step{
				{opTrigger, 1, waitset.Waiting, true},
				{opTake, 1, waitset.Queued, false},
				{opTrigger, 0, waitset.Queued, true},
				{opTrigger, 0, waitset.Queued, true},
				{opTake, 0, waitset.Queued, true},
				{opStart, 0, waitset.Running, true},
				{opFinish, 1, waitset.Waiting, true},
				{opTake, 1, waitset.Queued, false},
				{opStart, 0, waitset.Running, false},
				{opFinish, 0, waitset.Waiting, false},
				{opTake, 0, waitset.Waiting, false},
			},
		},
		{
			name: "trigger while running is kept and re-readies at finish",
			steps: []step{
				{opTrigger, 1, waitset.Waiting, true},
				{opTake, 1, waitset.Queued, false},
				{opStart, 0, waitset.Running, false},
				{opTrigger, 0, waitset.Running, true},
				{opTrigger, 0, waitset.Running, true},
				{opTake, 0, waitset.Running, true},
				{opFinish, 1, waitset.Waiting, true},
				{opTrigger, 0, waitset.Waiting, true},
				{opTake, 1, waitset.Queued, false},
				{opStart, 0, waitset.Running, false},
				{opFinish, 0, waitset.Waiting, false},
			},
		},
		{
			name: "finish with more work re-readies",
			steps: []step{
				{opTrigger, 1, waitset.Waiting, true},
				{opTake, 1, waitset.Queued, false},
				{opStart, 0, waitset.Running, false},
				{opFinishMore, 1, waitset.Waiting, true},
				{opTrigger, 0, waitset.Waiting, true},
				{opTake, 1, waitset.Queued, false},
				{opStart, 0, waitset.Running, false},
				{opFinish, 0, waitset.Waiting, false},
				{opTake, 0, waitset.Waiting, false},
			},
		},
		{
			name: "finish with more and a trigger during the run readies once",
			steps: []step{
				{opTrigger, 1, waitset.Waiting, true},
				{opTake, 1, waitset.Queued, false},
				{opStart, 0, waitset.Running, false},
				{opTrigger, 0, waitset.Running, true},
				{opFinishMore, 1, waitset.Waiting, true},
				{opTake, 1, waitset.Queued, false},
				{opTake, 0, waitset.Queued, false},
			},
		},
		{
			name: "trigger after finish readies again",
			steps: []step{
				{opTrigger, 1, waitset.Waiting, true},
				{opTake, 1, waitset.Queued, false},
				{opStart, 0, waitset.Running, false},
				{opFinish, 0, waitset.Waiting, false},
				{opTrigger, 1, waitset.Waiting, true},
				{opTake, 1, waitset.Queued, false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := waitset.New(nil, nil)
			var e waitset.Entity
			set.Register(&e, waitset.Subscription)
			var run waitset.List
			for i, s := range tt.steps {
				var got int
				switch s.op {
				case opTrigger:
					got = b2i(e.Trigger())
				case opTake:
					got, _ = set.Take(&run)
					if got > 0 {
						require.Same(t, &e, run.Pop(), "step %d", i)
					}
				case opStart:
					e.Start()
				case opFinish:
					got = b2i(e.Finish(false))
				case opFinishMore:
					got = b2i(e.Finish(true))
				}
				require.Equal(t, s.want, got, "step %d result", i)
				require.Equal(t, s.state, e.State(), "step %d state", i)
				require.Equal(t, s.inSet, e.InWaitSet(), "step %d in wait set", i)
				require.Equal(t, !(s.state == waitset.Waiting && s.inSet), set.Empty(), "step %d set empty", i)
			}
		})
	}
}

func TestEntityMisusePanics(t *testing.T) {
	// prepare brings a fresh entity into the given state.
	prepare := func(state waitset.State) (*waitset.Set, *waitset.Entity) {
		set := waitset.New(nil, nil)
		e := new(waitset.Entity)
		set.Register(e, waitset.Timer)
		if state == waitset.Waiting {
			return set, e
		}
		e.Trigger()
		var run waitset.List
		set.Take(&run)
		if state == waitset.Running {
			e.Start()
		}
		return set, e
	}
	tests := []struct {
		name  string
		state waitset.State
		do    func(*waitset.Set, *waitset.Entity)
		want  string
	}{
		{"start waiting", waitset.Waiting, func(_ *waitset.Set, e *waitset.Entity) { e.Start() },
			"waitset: start of an entity that is waiting"},
		{"start running", waitset.Running, func(_ *waitset.Set, e *waitset.Entity) { e.Start() },
			"waitset: start of an entity that is running"},
		{"finish waiting", waitset.Waiting, func(_ *waitset.Set, e *waitset.Entity) { e.Finish(false) },
			"waitset: finish of an entity that is waiting"},
		{"finish queued", waitset.Queued, func(_ *waitset.Set, e *waitset.Entity) { e.Finish(true) },
			"waitset: finish of an entity that is queued"},
		{"register twice", waitset.Waiting, func(s *waitset.Set, e *waitset.Entity) { s.Register(e, waitset.Timer) },
			"waitset: entity registered twice"},
		{"register with another set", waitset.Waiting, func(_ *waitset.Set, e *waitset.Entity) {
			waitset.New(nil, nil).Register(e, waitset.Timer)
		}, "waitset: entity registered twice"},
		{"trigger all of another set", waitset.Waiting, func(_ *waitset.Set, e *waitset.Entity) {
			waitset.New(nil, nil).TriggerAll([]*waitset.Entity{e})
		}, "waitset: TriggerAll of an entity of another set"},
		{"trigger all of an unregistered entity", waitset.Waiting, func(s *waitset.Set, _ *waitset.Entity) {
			s.TriggerAll([]*waitset.Entity{new(waitset.Entity)})
		}, "waitset: TriggerAll of an entity of another set"},
		{"trigger quietly in another set", waitset.Waiting, func(_ *waitset.Set, e *waitset.Entity) {
			waitset.New(nil, nil).Fast().TriggerQuiet(e)
		}, "waitset: TriggerQuiet of an entity of another set"},
		{"hold in another set", waitset.Waiting, func(_ *waitset.Set, e *waitset.Entity) {
			var held waitset.List
			waitset.New(nil, nil).Fast().Hold(e, &held)
		}, "waitset: Hold of an entity of another set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, e := prepare(tt.state)
			require.PanicsWithValue(t, tt.want, func() { tt.do(set, e) })
			require.Equal(t, tt.state, e.State(), "a refused step leaves the state as it was")
		})
	}
}

func TestEntityAccessors(t *testing.T) {
	var unregistered waitset.Entity
	require.Nil(t, unregistered.Set())
	require.Zero(t, unregistered.ID())
	require.Equal(t, waitset.Waiting, unregistered.State())
	require.False(t, unregistered.InWaitSet())

	set := waitset.New(nil, nil)
	kinds := []waitset.Kind{waitset.Timer, waitset.Subscription, waitset.Subscription, waitset.Timer}
	es := make([]*waitset.Entity, len(kinds))
	for i, k := range kinds {
		es[i] = &waitset.Entity{Data: i}
		set.Register(es[i], k)
	}
	for i, e := range es {
		require.Same(t, set, e.Set())
		require.Equal(t, kinds[i], e.Kind())
		require.Equal(t, uint64(i+1), e.ID(), "IDs count from 1 in registration order")
		require.Equal(t, i, e.Data, "the set never touches Data")
	}

	other := waitset.New(nil, nil)
	var e waitset.Entity
	other.Register(&e, waitset.Timer)
	require.Equal(t, uint64(1), e.ID(), "IDs are per set")
}

func TestStrings(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"kind timer", waitset.Timer.String(), "timer"},
		{"kind subscription", waitset.Subscription.String(), "subscription"},
		{"kind zero", waitset.Kind(0).String(), "unknown"},
		{"kind out of range", waitset.Kind(9).String(), "unknown"},
		{"state waiting", waitset.Waiting.String(), "waiting"},
		{"state queued", waitset.Queued.String(), "queued"},
		{"state running", waitset.Running.String(), "running"},
		{"state out of range", waitset.State(3).String(), "invalid"},
		{"op ready", trace.Ready.String(), "ready"},
		{"op enqueue", trace.Enqueue.String(), "enqueue"},
		{"op dequeue", trace.Dequeue.String(), "dequeue"},
		{"op start", trace.Start.String(), "start"},
		{"op finish", trace.Finish.String(), "finish"},
		{"op accept", trace.Accept.String(), "accept"},
		{"op drop", trace.Drop.String(), "drop"},
		{"op zero", trace.Op(0).String(), "invalid"},
		{"op out of range", trace.Op(42).String(), "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.got)
		})
	}
}
