package timerq_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/waitset"
)

// TestQueueMatchesModel drives a queue with random resets, cancels and clock
// steps and compares it after every step with a model: a map from timer to
// deadline. It exercises the deadline heap's insert, remove from the middle
// and pop paths, and checks that timers fall due exactly at their deadlines,
// all of one instant in one batch, in the order they were made.
func TestQueueMatchesModel(t *testing.T) {
	tests := []struct {
		seed   uint64
		timers int
		steps  int
	}{
		{seed: 1, timers: 3, steps: 2000},
		{seed: 2, timers: 40, steps: 2000},
		{seed: 3, timers: 40, steps: 2000},
		{seed: 4, timers: 500, steps: 1000},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("seed=%d/timers=%d", tt.seed, tt.timers), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tt.seed, 99))
			r := newRig(t)
			tms := make([]*timerq.Timer, tt.timers)
			for i := range tms {
				// Few distinct periods, so that deadlines often coincide.
				tms[i] = r.timer(time.Duration(1+rng.IntN(8))*ms, i%7 == 3)
			}
			model := map[*timerq.Timer]time.Time{}
			calls := map[*timerq.Timer]uint64{}
			// settle runs what is due and checks it against the model: the
			// timers whose deadlines have come, by deadline, then by age, in
			// one batch, each late by less than a period.
			settle := func(step int) {
				now := r.clock.Now()
				var want []*timerq.Timer
				for tm, d := range model {
					if !d.After(now) {
						want = append(want, tm)
					}
				}
				slices.SortFunc(want, func(a, b *timerq.Timer) int {
					if c := model[a].Compare(model[b]); c != 0 {
						return c
					}
					return cmp.Compare(a.ID(), b.ID())
				})
				got := r.spin()
				require.Len(t, got, len(want), "step %d", step)
				for i, c := range got {
					require.Same(t, want[i], c.timer, "step %d, call %d", step, i)
					require.True(t, c.ok)
					require.Equal(t, got[0].batch, c.batch, "step %d: one batch", step)
					require.Equal(t, model[c.timer], c.ev.Expected)
					require.Equal(t, now, c.ev.Actual)
					require.Zero(t, c.ev.Missed)
					calls[c.timer]++
					if c.timer.OneShot() {
						delete(model, c.timer)
					} else {
						model[c.timer] = model[c.timer].Add(c.timer.Period())
					}
				}
			}
			for step := range tt.steps {
				switch k := rng.IntN(10); {
				case k < 3:
					tm := tms[rng.IntN(len(tms))]
					tm.Reset()
					model[tm] = r.clock.Now().Add(tm.Period())
				case k < 4:
					tm := tms[rng.IntN(len(tms))]
					tm.Cancel()
					delete(model, tm)
				case k < 5:
					// A small step that may pass a deadline or two.
					r.clock.Advance(time.Duration(rng.IntN(3)) * time.Microsecond)
					settle(step)
				default:
					next, ok := r.clock.Next()
					if !ok {
						require.Empty(t, model, "step %d: armed timers but no alarm", step)
						continue
					}
					for tm, d := range model {
						require.False(t, d.Before(next), "step %d: the alarm is set after the deadline of timer %d", step, tm.ID())
					}
					r.clock.AdvanceTo(next)
					settle(step)
				}
				require.Equal(t, len(model), r.q.Len(), "step %d", step)
				if len(tms) > 50 && step%8 != 0 {
					continue // keep the big case fast under -race
				}
				for _, tm := range tms {
					d, ok := tm.Deadline()
					md, armed := model[tm]
					if ok != armed || !d.Equal(md) || tm.Canceled() == armed {
						require.Equal(t, armed, ok, "step %d: has a deadline", step)
						require.Equal(t, md, d, "step %d: deadline", step)
						require.Equal(t, !armed, tm.Canceled(), "step %d: canceled", step)
					}
				}
			}
			total := uint64(0)
			for _, tm := range tms {
				require.Equal(t, calls[tm], tm.Calls())
				require.Zero(t, tm.Missed())
				total += calls[tm]
			}
			require.Positive(t, total)
		})
	}
}

// TestConcurrentUse has goroutines reset, cancel and read timers while the
// test goroutine advances the clock and runs what falls due. Run it with
// -race. Each timer's calls serve strictly increasing deadlines, never in
// the future.
func TestConcurrentUse(t *testing.T) {
	const (
		goroutines = 4
		ops        = 2000
		steps      = 2000
	)
	r := newRig(t)
	tms := make([]*timerq.Timer, 8)
	for i := range tms {
		tms[i] = r.started(time.Duration(1+i%3)*ms, i == 5)
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for range ops {
				tm := tms[rng.IntN(len(tms))]
				switch rng.IntN(6) {
				case 0:
					tm.Reset()
				case 1:
					tm.Cancel()
				case 2:
					tm.Deadline()
				case 3:
					tm.Canceled()
				case 4:
					r.q.Len()
				case 5:
					tm.Calls()
					tm.Missed()
				}
			}
		})
	}
	last := map[*timerq.Timer]time.Time{}
	for step := range steps {
		r.clock.Advance(ms / 2)
		for _, c := range r.spin() {
			if !c.ok {
				continue
			}
			require.True(t, c.ev.Expected.After(last[c.timer]), "step %d", step)
			require.False(t, c.ev.Expected.After(c.ev.Actual), "step %d", step)
			last[c.timer] = c.ev.Expected
		}
	}
	wg.Wait()
	r.q.Stop()
	require.Zero(t, r.q.Len())
}

// TestEqualDeadlines checks that timers falling due at the same time are
// triggered as one step, in one batch, in the order they were made, whatever
// the order they were armed in.
func TestEqualDeadlines(t *testing.T) {
	r := newRig(t)
	var sub waitset.Entity
	r.set.Register(&sub, waitset.Subscription)
	const n = 64
	tms := make([]*timerq.Timer, n)
	for i := range tms {
		tms[i] = r.timer(10*ms, false)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, i := range rng.Perm(n) {
		tms[i].Reset()
	}
	for k := 1; k <= 3; k++ {
		sub.Trigger()
		wakes := r.wakes
		r.clock.Advance(10 * ms)
		require.Equal(t, wakes+1, r.wakes, "one wake for the whole step")
		n, batch := r.set.Take(&r.run)
		require.Equal(t, len(tms)+1, n, "in one batch with the subscription")
		for i := range tms {
			x := r.run.Pop()
			require.Same(t, timerq.Entity(tms[i]), x, "position %d", i)
			x.Start()
			ev, ok := timerq.Call(tms[i])
			require.True(t, ok)
			require.Equal(t, at(time.Duration(k)*10*ms), ev.Expected)
			x.Finish(false)
		}
		require.Same(t, &sub, r.run.Pop(), "timers before subscriptions")
		sub.Start()
		sub.Finish(false)
		require.NotZero(t, batch)
	}
}

// TestCoincidingPeriods checks timers of different periods that meet on
// common multiples.
func TestCoincidingPeriods(t *testing.T) {
	r := newRig(t)
	t6 := r.started(6*ms, false)
	t2 := r.started(2*ms, false)
	t3 := r.started(3*ms, false)
	want := map[time.Duration][]*timerq.Timer{
		2 * ms: {t2}, 3 * ms: {t3}, 4 * ms: {t2}, 6 * ms: {t6, t2, t3},
		8 * ms: {t2}, 9 * ms: {t3}, 10 * ms: {t2}, 12 * ms: {t6, t2, t3},
	}
	for _, d := range []time.Duration{2, 3, 4, 6, 8, 9, 10, 12} {
		d *= ms
		calls := r.step()
		require.Equal(t, at(d), r.clock.Now())
		require.Len(t, calls, len(want[d]), "at %v", d)
		for i, c := range calls {
			require.Same(t, want[d][i], c.timer, "at %v, call %d", d, i)
			require.Equal(t, at(d), c.ev.Expected)
			require.Equal(t, calls[0].batch, c.batch, "one batch")
		}
	}
}

func TestQueueStop(t *testing.T) {
	r := newRig(t)
	a := r.started(10*ms, false)
	b := r.started(15*ms, false)
	one := r.started(20*ms, true)
	r.clock.Advance(10 * ms) // a is due
	require.Equal(t, 2, r.q.Len())

	r.q.Stop()
	require.Zero(t, r.q.Len())
	_, ok := r.clock.Next()
	require.False(t, ok, "the alarm is stopped")
	require.True(t, b.Canceled())
	require.True(t, one.Canceled())

	wakes := r.wakes
	r.clock.Advance(time.Hour)
	require.Equal(t, wakes, r.wakes, "nothing more is triggered")

	ev := only(t, r.spin(), a)
	require.Equal(t, at(10*ms), ev.Expected, "a due timer may still be called once")
	require.True(t, a.Canceled(), "and is not re-armed")
	_, ok = a.Deadline()
	require.False(t, ok)
	require.Zero(t, r.q.Len())

	for _, tm := range []*timerq.Timer{a, b, one} {
		tm.Reset()
		require.True(t, tm.Canceled(), "Reset after Stop does nothing")
		tm.Cancel()
	}
	require.Empty(t, r.advance(time.Hour))

	_, err := r.q.NewTimer(ms, false)
	require.ErrorIs(t, err, timerq.ErrStopped)
	r.q.Stop() // idempotent
	require.Zero(t, r.q.Len())
}

// lateClock is a simulated clock that keeps the function of every alarm, so
// that a test can run one as if its runtime timer had fired just before the
// alarm was stopped ("a call already under way may still finish").
type lateClock struct {
	*timerq.Sim
	rings []func()
}

func (c *lateClock) NewAlarm(f func()) timerq.Alarm {
	c.rings = append(c.rings, f)
	return c.Sim.NewAlarm(f)
}

func TestRingUnderWayAtStop(t *testing.T) {
	clock := &lateClock{Sim: timerq.NewSim(epoch)}
	wakes := 0
	set := waitset.New(func() { wakes++ }, nil)
	q := timerq.NewQueue(clock, set)
	require.Len(t, clock.rings, 1, "one alarm per queue")
	tm, err := q.NewTimer(10*ms, false)
	require.NoError(t, err)
	tm.Reset()
	clock.rings[0]() // a ring before the deadline only re-arms
	require.Zero(t, wakes)

	clock.AdvanceTo(at(10*ms - 1))
	q.Stop()
	clock.Advance(time.Hour)
	clock.rings[0]() // the ring that was under way when Stop was called
	require.Zero(t, wakes, "nothing is triggered after Stop returns")
	require.True(t, set.Empty())
	require.True(t, tm.Canceled())
	_, ok := clock.Next()
	require.False(t, ok)
}
