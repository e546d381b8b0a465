package waitset_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// recorder is an Observer that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []trace.Event
}

func (r *recorder) Observe(ev trace.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

// drain returns the events recorded so far and forgets them.
func (r *recorder) drain() []trace.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	evs := r.events
	r.events = nil
	return evs
}

const (
	T = waitset.Timer
	S = waitset.Subscription
)

// register makes one registered entity per kind, in order.
func register(set *waitset.Set, kinds ...waitset.Kind) []*waitset.Entity {
	es := make([]*waitset.Entity, len(kinds))
	for i, k := range kinds {
		es[i] = &waitset.Entity{Data: i}
		set.Register(es[i], k)
	}
	return es
}

// indexes pops every entity of l and returns their Data indexes.
func indexes(l *waitset.List) []int {
	var out []int
	for e := l.Pop(); e != nil; e = l.Pop() {
		out = append(out, e.Data.(int))
	}
	return out
}

func pick(es []*waitset.Entity, idx ...int) []*waitset.Entity {
	out := make([]*waitset.Entity, len(idx))
	for i, j := range idx {
		out[i] = es[j]
	}
	return out
}

func TestTakeBatchOrder(t *testing.T) {
	tests := []struct {
		name    string
		kinds   []waitset.Kind
		trigger []int
		want    []int
	}{
		{"single", []waitset.Kind{S}, []int{0}, []int{0}},
		{"timers before subscriptions", []waitset.Kind{S, T, S, T}, []int{0, 1, 2, 3}, []int{1, 3, 0, 2}},
		{"readiness order within each kind, not registration order",
			[]waitset.Kind{T, T, T, S, S, S}, []int{2, 0, 5, 1, 3, 4}, []int{2, 0, 1, 5, 3, 4}},
		{"a coalesced trigger keeps the first position",
			[]waitset.Kind{S, S, S, T}, []int{1, 0, 1, 3, 2, 0, 3}, []int{3, 1, 0, 2}},
		{"only timers", []waitset.Kind{T, T, T}, []int{2, 1, 0}, []int{2, 1, 0}},
		{"only subscriptions", []waitset.Kind{S, S, S}, []int{1, 2, 0}, []int{1, 2, 0}},
		{"untriggered entities stay out", []waitset.Kind{S, T, S, T}, []int{2}, []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := waitset.New(nil, nil)
			es := register(set, tt.kinds...)
			for _, i := range tt.trigger {
				es[i].Trigger()
			}
			var run waitset.List
			n, batch := set.Take(&run)
			require.Equal(t, len(tt.want), n)
			require.Equal(t, uint64(1), batch)
			require.Equal(t, n, run.Len())
			require.Equal(t, tt.want, indexes(&run))
			taken := map[int]bool{}
			for _, i := range tt.want {
				taken[i] = true
			}
			for i, e := range es {
				want := waitset.Waiting
				if taken[i] {
					want = waitset.Queued
				}
				require.Equal(t, want, e.State(), "entity %d", i)
				require.False(t, e.InWaitSet(), "entity %d", i)
			}
			require.True(t, set.Empty())
			n, batch = set.Take(&run)
			require.Zero(t, n)
			require.Zero(t, batch)
		})
	}
}

func TestTakeAppendsBatchesInOrder(t *testing.T) {
	set := waitset.New(nil, nil)
	es := register(set, S, T, S, T)
	var run waitset.List

	n, batch := set.Take(&run)
	require.Zero(t, n)
	require.Zero(t, batch, "an empty take uses no batch number")

	es[0].Trigger()
	es[1].Trigger()
	n, batch = set.Take(&run)
	require.Equal(t, 2, n)
	require.Equal(t, uint64(1), batch)

	es[2].Trigger()
	es[3].Trigger()
	n, batch = set.Take(&run)
	require.Equal(t, 2, n)
	require.Equal(t, uint64(2), batch)

	// Timers come first within a batch only: the subscription of batch 1
	// stays ahead of the timer of batch 2.
	require.Equal(t, 4, run.Len())
	require.Equal(t, []int{1, 0, 3, 2}, indexes(&run))

	n, batch = set.Take(&run)
	require.Zero(t, n)
	require.Zero(t, batch)
	es[0].Start()
	es[0].Finish(true)
	n, batch = set.Take(&run)
	require.Equal(t, 1, n)
	require.Equal(t, uint64(3), batch)
}

func TestTriggerAll(t *testing.T) {
	tests := []struct {
		name    string
		kinds   []waitset.Kind
		before  []int // single triggers before TriggerAll
		all     []int // the TriggerAll argument
		after   []int // single triggers after TriggerAll
		want    []int // the one batch Take returns
		wakes   int
		inBatch int // how many TriggerAll readied
	}{
		{"one batch, timers first", []waitset.Kind{T, S, T, S}, nil, []int{0, 1, 2, 3}, nil,
			[]int{0, 2, 1, 3}, 1, 4},
		{"keeps the argument's order", []waitset.Kind{T, T, T, S, S}, nil, []int{2, 0, 4, 1, 3}, nil,
			[]int{2, 0, 1, 4, 3}, 1, 5},
		{"merges with single triggers in readiness order", []waitset.Kind{S, S, S, S}, []int{1}, []int{3, 0}, []int{2},
			[]int{1, 3, 0, 2}, 3, 2},
		{"skips entities already in the wait set", []waitset.Kind{S, S, S}, []int{0}, []int{1, 0, 2}, nil,
			[]int{0, 1, 2}, 2, 2},
		{"duplicates count once", []waitset.Kind{T, T}, nil, []int{1, 1, 0, 1}, nil,
			[]int{1, 0}, 1, 2},
		{"nothing new wakes nobody", []waitset.Kind{T, S}, []int{0, 1}, []int{1, 0}, nil,
			[]int{0, 1}, 2, 0},
		{"empty argument", []waitset.Kind{T}, nil, []int{}, nil, nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wakes := 0
			rec := &recorder{}
			set := waitset.New(func() { wakes++ }, rec)
			es := register(set, tt.kinds...)
			for _, i := range tt.before {
				es[i].Trigger()
			}
			rec.drain()
			set.TriggerAll(pick(es, tt.all...))
			require.Len(t, rec.drain(), tt.inBatch, "one Ready event per entity readied")
			for _, i := range tt.after {
				es[i].Trigger()
			}
			require.Equal(t, tt.wakes, wakes)
			var run waitset.List
			n, _ := set.Take(&run)
			require.Equal(t, len(tt.want), n)
			require.Equal(t, tt.want, indexes(&run))
			require.True(t, set.Empty())
		})
	}
}

func TestTriggerAllKeepsQueuedAndRunning(t *testing.T) {
	set := waitset.New(nil, nil)
	es := register(set, T, T, T)
	var run waitset.List
	es[0].Trigger()
	es[1].Trigger()
	set.Take(&run)
	es[1].Start()

	set.TriggerAll(es)
	require.True(t, es[0].InWaitSet())
	require.True(t, es[1].InWaitSet())
	require.Equal(t, waitset.Queued, es[0].State())
	require.Equal(t, waitset.Running, es[1].State())

	var next waitset.List
	n, _ := set.Take(&next)
	require.Equal(t, 1, n, "only the waiting entity is taken")
	require.Equal(t, []int{2}, indexes(&next))

	require.True(t, es[1].Finish(false), "the trigger during the run re-readies")
	require.Same(t, es[0], run.Pop())
	es[0].Start()
	require.True(t, es[0].Finish(false), "the trigger while queued re-readies")
	n, _ = set.Take(&next)
	require.Equal(t, 2, n)
	require.Equal(t, []int{1, 0}, indexes(&next))
}

func TestWake(t *testing.T) {
	var set *waitset.Set
	wakes := 0
	var emptyAtWake []bool
	set = waitset.New(func() {
		wakes++
		emptyAtWake = append(emptyAtWake, set.Empty())
	}, nil)
	es := register(set, S, T)
	var run waitset.List

	tests := []struct {
		name string
		do   func()
		want int // wakes so far
	}{
		{"trigger readies", func() { es[0].Trigger() }, 1},
		{"coalesced trigger", func() { es[0].Trigger() }, 1},
		{"take", func() { set.Take(&run) }, 1},
		{"trigger while queued", func() { es[0].Trigger() }, 1},
		{"start", func() { run.Pop().Start() }, 1},
		{"finish re-readies", func() { es[0].Finish(false) }, 2},
		{"take again", func() { set.Take(&run); run.Pop().Start() }, 2},
		{"finish with nothing left", func() { es[0].Finish(false) }, 2},
		{"trigger all", func() { set.TriggerAll(es) }, 3},
		{"take both", func() { set.Take(&run) }, 3},
		{"finish with more", func() {
			for e := run.Pop(); e != nil; e = run.Pop() {
				e.Start()
				e.Finish(e.Kind() == waitset.Subscription)
			}
		}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.do()
			require.Equal(t, tt.want, wakes)
		})
	}
	for i, empty := range emptyAtWake {
		require.False(t, empty, "wake %d: the ready entity is takeable when wake runs", i)
	}
}

func TestObserver(t *testing.T) {
	require.Nil(t, waitset.New(nil, nil).Observer())

	rec := &recorder{}
	var readyBeforeWake []bool
	var set *waitset.Set
	set = waitset.New(func() {
		evs := rec.events
		readyBeforeWake = append(readyBeforeWake, len(evs) > 0 && evs[len(evs)-1].Op == trace.Ready)
	}, rec)
	require.Same(t, rec, set.Observer())
	es := register(set, S, T, S, T, S)
	a, b, c, d, f := es[0], es[1], es[2], es[3], es[4]
	var run waitset.List

	a.Trigger()
	b.Trigger()
	a.Trigger() // coalesced: no event
	set.Take(&run)
	c.Trigger()
	require.Same(t, b, run.Pop())
	require.Same(t, a, run.Pop())
	a.Start()
	a.Trigger() // kept while running: no event until Finish
	a.Finish(false)
	set.Take(&run)
	set.TriggerAll([]*waitset.Entity{f, d, c})
	set.Take(&run)
	b.Start()
	b.Finish(true)
	set.Take(&run)

	// Seq numbers each entity's readies; the Enqueue that takes the entity
	// carries the number of the Ready it serves.
	type ev struct {
		op    trace.Op
		id    uint64
		batch uint64
		seq   uint64
	}
	want := []ev{
		{trace.Ready, a.ID(), 0, 1},
		{trace.Ready, b.ID(), 0, 1},
		{trace.Enqueue, b.ID(), 1, 1},
		{trace.Enqueue, a.ID(), 1, 1},
		{trace.Ready, c.ID(), 0, 1},
		{trace.Ready, a.ID(), 0, 2},
		{trace.Enqueue, c.ID(), 2, 1},
		{trace.Enqueue, a.ID(), 2, 2},
		{trace.Ready, f.ID(), 0, 1}, // c is queued: TriggerAll keeps it, no event
		{trace.Ready, d.ID(), 0, 1},
		{trace.Enqueue, d.ID(), 3, 1},
		{trace.Enqueue, f.ID(), 3, 1},
		{trace.Ready, b.ID(), 0, 2},
		{trace.Enqueue, b.ID(), 4, 2},
	}
	var got []ev
	for _, e := range rec.drain() {
		require.Zero(t, e.Worker)
		require.Empty(t, e.Reason)
		got = append(got, ev{e.Op, e.ID, e.Batch, e.Seq})
	}
	require.Equal(t, want, got)
	require.Equal(t, []bool{true, true, true, true, true, true}, readyBeforeWake)
}

// TestTriggerAllQuiet triggers like TriggerAll, without the wake-up.
func TestTriggerAllQuiet(t *testing.T) {
	wakes := 0
	set := waitset.New(func() { wakes++ }, nil)
	es := register(set, S, T)
	set.Fast().TriggerAllQuiet(es)
	require.Zero(t, wakes)
	var run waitset.List
	n, _ := set.Take(&run)
	require.Equal(t, 2, n)
	require.Same(t, es[1], run.Pop(), "timers first")
	require.Same(t, es[0], run.Pop())
	set.TriggerAll(nil)
	require.Zero(t, wakes, "nothing triggered, nothing woken")
}
