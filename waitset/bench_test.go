package waitset_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/waitset"
)

// cycle moves e once through its life: trigger, take, start, finish.
func cycle(set *waitset.Set, e *waitset.Entity, run *waitset.List) {
	e.Trigger()
	set.Take(run)
	x := run.Pop()
	x.Start()
	x.Finish(false)
}

func TestCycleDoesNotAllocate(t *testing.T) {
	tests := []struct {
		name string
		wake func()
	}{
		{"no wake", nil},
		{"wake", func() {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := waitset.New(tt.wake, nil)
			var e waitset.Entity
			set.Register(&e, waitset.Timer)
			var run waitset.List
			allocs := testing.AllocsPerRun(1000, func() { cycle(set, &e, &run) })
			require.Zero(t, allocs)
			es := register(set, T, S, T, S)
			allocs = testing.AllocsPerRun(1000, func() {
				set.TriggerAll(es)
				set.Take(&run)
				for x := run.Pop(); x != nil; x = run.Pop() {
					x.Start()
					x.Finish(false)
				}
			})
			require.Zero(t, allocs)
		})
	}
}

// BenchmarkCycle measures one entity's trigger, take, start and finish on
// one goroutine: the wait set's share of dispatching a callback.
func BenchmarkCycle(b *testing.B) {
	set := waitset.New(func() {}, nil)
	var e waitset.Entity
	set.Register(&e, waitset.Subscription)
	var run waitset.List
	b.ReportAllocs()
	for b.Loop() {
		cycle(set, &e, &run)
	}
}

// BenchmarkTriggerAllTake measures a batch of n timers falling due together
// and being taken and run.
func BenchmarkTriggerAllTake(b *testing.B) {
	for _, n := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			set := waitset.New(func() {}, nil)
			kinds := make([]waitset.Kind, n)
			for i := range kinds {
				kinds[i] = T
			}
			es := register(set, kinds...)
			var run waitset.List
			b.ReportAllocs()
			for b.Loop() {
				set.TriggerAll(es)
				set.Take(&run)
				for x := run.Pop(); x != nil; x = run.Pop() {
					x.Start()
					x.Finish(false)
				}
			}
		})
	}
}

// BenchmarkTriggerCoalesced measures triggers from many goroutines on an
// entity that is already in the wait set: one atomic operation each.
func BenchmarkTriggerCoalesced(b *testing.B) {
	set := waitset.New(nil, nil)
	var e waitset.Entity
	set.Register(&e, waitset.Subscription)
	e.Trigger()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e.Trigger()
		}
	})
}
