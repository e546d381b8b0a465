package timerq_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/waitset"
)

// armedRig returns a rig with n armed timers whose deadlines lie far beyond
// any benchmark, and one 1µs timer that falls due at every step.
func armedRig(tb testing.TB, n int) (*rig, *timerq.Timer) {
	r := newRig(tb)
	for i := range n {
		r.started(1000*time.Hour+time.Duration(i), false)
	}
	hot := r.started(time.Microsecond, false)
	return r, hot
}

// fire steps the clock one period of hot, which rings the queue's alarm, and
// runs hot: ring, trigger, take, start, call, finish.
func fire(r *rig, hot *timerq.Timer) {
	r.clock.Advance(time.Microsecond)
	r.set.Take(&r.run)
	x := r.run.Pop()
	if x == nil {
		r.t.Fatal("the timer did not fall due")
	}
	x.Start()
	timerq.Call(hot)
	x.Finish(false)
}

func TestRingAndCallDoNotAllocate(t *testing.T) {
	for _, n := range []int{0, 1000} {
		t.Run(fmt.Sprintf("armed=%d", n), func(t *testing.T) {
			r, hot := armedRig(t, n)
			fire(r, hot) // let the queue's buffers grow
			require.Zero(t, testing.AllocsPerRun(1000, func() { fire(r, hot) }))
			require.Equal(t, uint64(1001+1), hot.Calls())
			require.Zero(t, hot.Missed())
		})
	}
}

// BenchmarkQueue measures the timer path with 10 and 100,000 other armed
// timers: "fire" is a ring, trigger, take and call of one due timer (heap
// pop and push); "reset" re-arms one timer (heap remove and push).
func BenchmarkQueue(b *testing.B) {
	for _, n := range []int{10, 100_000} {
		b.Run(fmt.Sprintf("fire/armed=%d", n), func(b *testing.B) {
			r, hot := armedRig(b, n)
			b.ReportAllocs()
			for b.Loop() {
				fire(r, hot)
			}
		})
		b.Run(fmt.Sprintf("reset/armed=%d", n), func(b *testing.B) {
			r, hot := armedRig(b, n)
			b.ReportAllocs()
			for b.Loop() {
				hot.Reset()
			}
			_ = r
		})
		b.Run(fmt.Sprintf("ring-many/armed=%d", n), func(b *testing.B) {
			// 10 timers falling due together, among n armed ones.
			r := newRig(b)
			for i := range n {
				r.started(1000*time.Hour+time.Duration(i), false)
			}
			due := make([]*timerq.Timer, 10)
			for i := range due {
				due[i] = r.started(time.Microsecond, false)
			}
			b.ReportAllocs()
			for b.Loop() {
				r.clock.Advance(time.Microsecond)
				r.set.Take(&r.run)
				for x := r.run.Pop(); x != nil; x = r.run.Pop() {
					x.Start()
					timerq.Call(x.Data.(*timerq.Timer))
					x.Finish(false)
				}
			}
		})
	}
}

// BenchmarkQueueGroups measures 1,000 timers of one period that fall due
// in groups, as timers started together on a grid do: in 6 groups (1,000
// at 100 Hz started over 600 µs on the precise clock), or all in one
// group. Each op steps the clock to the next group and serves it: one
// ring, the group's triggers, take and calls (the heap's removals and
// re-insertions). The cold variant serves groups of 128, a Precise
// clock's PreciseGroup, after evicting the caches (untimed) before each
// op, as an idle period between deadlines may: what it measures is the
// cache misses of a group's service.
func BenchmarkQueueGroups(b *testing.B) {
	for _, groups := range []int{6, 1} {
		b.Run(fmt.Sprintf("groups=%d", groups), func(b *testing.B) {
			benchmarkQueueGroups(b, groups, false)
		})
	}
	b.Run("groups=8/cold", func(b *testing.B) { benchmarkQueueGroups(b, 8, true) })
}

// evict writes over buf, a buffer larger than the caches, so that what
// the benchmark touched before is no longer in them.
func evict(buf []byte) {
	for i := 0; i < len(buf); i += 64 {
		buf[i]++
	}
}

func benchmarkQueueGroups(b *testing.B, groups int, cold bool) {
	const n = 1000
	r := newRig(b)
	for i := range n {
		if i > 0 && i%(n/groups) == 0 {
			r.clock.Advance(100 * time.Microsecond)
		}
		r.started(time.Duration(groups)*100*time.Microsecond, false)
	}
	step := func() int {
		r.clock.Advance(100 * time.Microsecond)
		r.set.Take(&r.run)
		k := 0
		for x := r.run.Pop(); x != nil; x = r.run.Pop() {
			x.Start()
			timerq.Call(x.Data.(*timerq.Timer))
			x.Finish(false)
			k++
		}
		return k
	}
	for range groups {
		step()
	}
	var buf []byte
	if cold {
		buf = make([]byte, 64<<20)
	}
	b.ReportAllocs()
	calls := 0
	for b.Loop() {
		if cold {
			b.StopTimer()
			evict(buf)
			b.StartTimer()
		}
		calls += step()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(calls), "ns/timer")
}

// BenchmarkNewTimer measures making and arming a timer.
func BenchmarkNewTimer(b *testing.B) {
	clock := timerq.NewSim(epoch)
	q := timerq.NewQueue(clock, waitset.New(nil, nil))
	b.ReportAllocs()
	for b.Loop() {
		tm, _ := q.NewTimer(time.Hour, false)
		tm.Reset()
		timerq.Detach(tm)
	}
}
