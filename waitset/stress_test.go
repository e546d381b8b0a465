package waitset_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// stressEntity is an entity with the bookkeeping the stress test checks.
type stressEntity struct {
	waitset.Entity
	// triggered counts triggers issued; a triggerer bumps it before it
	// calls Trigger, as a producer publishes data before it signals.
	triggered atomic.Uint64
	// seen is the highest value of triggered that a run read after Start.
	seen atomic.Uint64
	// busy is set while a worker holds the entity, from hand-out to Finish.
	busy atomic.Bool
	runs atomic.Uint64
	// more is how many runs may still end with Finish(true).
	more atomic.Int64
	// urgent marks an urgent subscription (Entity.SetUrgent).
	urgent bool
	// Guarded by mu: the readiness numbers of the Ready events observed,
	// and the number of the last Enqueue event.
	mu       sync.Mutex
	readySeq []bool
	enqSeq   uint64
}

// stressCheck collects the errors that goroutines other than the test's
// find; the test goroutine reports them.
type stressCheck struct {
	errs  chan error
	count atomic.Int64
}

func (c *stressCheck) errorf(format string, args ...any) {
	c.count.Add(1)
	select {
	case c.errs <- fmt.Errorf(format, args...):
	default:
	}
}

// stressObserver counts Ready and Enqueue events and checks their readiness
// numbers: each entity's Enqueue events come in order 1, 2, 3, ...; its Ready
// events carry each number once, but may be observed late (after the
// Enqueue, even after a later Ready), since a Ready is observed after the
// push that lets another goroutine take the entity.
type stressObserver struct {
	check           *stressCheck
	ready, enqueued atomic.Int64
	byID            map[uint64]*stressEntity // written before the set is used
}

func (o *stressObserver) Observe(ev trace.Event) {
	en := o.byID[ev.ID]
	en.mu.Lock()
	defer en.mu.Unlock()
	switch ev.Op {
	case trace.Ready:
		o.ready.Add(1)
		for uint64(len(en.readySeq)) <= ev.Seq {
			en.readySeq = append(en.readySeq, false)
		}
		if ev.Seq == 0 || en.readySeq[ev.Seq] {
			o.check.errorf("entity %d: Ready %d twice or zero", en.ID(), ev.Seq)
		}
		en.readySeq[ev.Seq] = true
	case trace.Enqueue:
		o.enqueued.Add(1)
		if ev.Batch == 0 {
			o.check.errorf("entity %d: Enqueue in batch 0", en.ID())
		}
		if ev.Seq != en.enqSeq+1 {
			o.check.errorf("entity %d: Enqueue %d after Enqueue %d", en.ID(), ev.Seq, en.enqSeq)
		}
		en.enqSeq = ev.Seq
	default:
		o.check.errorf("unexpected event %v", ev.Op)
	}
}

// TestConcurrentTriggerTakeRun has goroutines trigger a fixed set of entities
// while workers take, start and finish them. It checks that no entity is ever
// held by two workers at once, that every trigger is followed by a run that
// starts after it, that batches put timers first, and that nothing is run
// that was not triggered. Everything is bounded by counts: the triggerers
// stop after a fixed number of triggers, Finish(true) has a fixed budget, and
// the workers stop when the set is empty after the triggerers are done.
func TestConcurrentTriggerTakeRun(t *testing.T) {
	tests := []struct {
		entities, triggerers, triggers, workers int
		more                                    int64
	}{
		{entities: 1, triggerers: 4, triggers: 20000, workers: 4, more: 500},
		{entities: 12, triggerers: 4, triggers: 20000, workers: 3, more: 50},
		{entities: 100, triggerers: 3, triggers: 20000, workers: 2, more: 10},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("entities=%d/triggerers=%d/workers=%d", tt.entities, tt.triggerers, tt.workers)
		t.Run(name, func(t *testing.T) {
			check := &stressCheck{errs: make(chan error, 20)}
			obs := &stressObserver{check: check, byID: map[uint64]*stressEntity{}}
			wake := make(chan struct{}, 1)
			set := waitset.New(func() {
				select {
				case wake <- struct{}{}:
				default:
				}
			}, obs)
			ents := make([]*stressEntity, tt.entities)
			for i := range ents {
				en := &stressEntity{}
				en.Data = en
				en.more.Store(tt.more)
				kind := waitset.Subscription
				switch i % 3 {
				case 0:
					kind = waitset.Timer
				case 1:
					en.urgent = true
					en.SetUrgent(true)
				}
				set.Register(&en.Entity, kind)
				obs.byID[en.ID()] = en
				ents[i] = en
			}
			// A run needs a Ready, and a Ready needs a trigger or a
			// Finish(true); more runs than that is a phantom run.
			// TriggerAll counts as up to 3 triggers.
			maxRuns := int64(3*tt.triggerers*tt.triggers) + tt.more*int64(tt.entities)

			var triggerTrue, finishTrue, runs atomic.Int64
			var triggerers sync.WaitGroup
			for g := range tt.triggerers {
				triggerers.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), uint64(tt.entities)))
					batch := make([]*waitset.Entity, 0, 3)
					for i := range tt.triggers {
						if g == 0 && i%8 == 0 {
							// TriggerAll, as a timer queue does for timers
							// that fall due together.
							batch = batch[:0]
							for range cap(batch) {
								en := ents[rng.IntN(len(ents))]
								en.triggered.Add(1)
								batch = append(batch, &en.Entity)
							}
							set.TriggerAll(batch)
							continue
						}
						en := ents[rng.IntN(len(ents))]
						en.triggered.Add(1)
						if en.Trigger() {
							triggerTrue.Add(1)
						}
						if i%16 == 0 {
							runtime.Gosched()
						}
					}
				})
			}
			stop := make(chan struct{})
			var workers sync.WaitGroup
			for w := range tt.workers {
				workers.Go(func() {
					var run waitset.List
					var held []*waitset.Entity
					var lastBatch uint64
					for {
						n, batch := set.Take(&run)
						if n == 0 {
							select {
							case <-wake:
							case <-stop:
								if set.Empty() {
									return
								}
							}
							continue
						}
						if batch <= lastBatch {
							check.errorf("worker %d: batch %d after batch %d", w, batch, lastBatch)
						}
						lastBatch = batch
						if run.Len() != n {
							check.errorf("worker %d: Take reported %d, appended %d", w, n, run.Len())
						}
						held = held[:0]
						for x := run.Pop(); x != nil; x = run.Pop() {
							if x.Kind() == waitset.Timer && len(held) > 0 && held[len(held)-1].Kind() == waitset.Subscription {
								check.errorf("worker %d: batch %d has a timer after a subscription", w, batch)
							}
							if x.Data.(*stressEntity).urgent && len(held) > 0 && held[len(held)-1].Kind() == waitset.Subscription &&
								!held[len(held)-1].Data.(*stressEntity).urgent {
								check.errorf("worker %d: batch %d has an urgent subscription after another", w, batch)
							}
							held = append(held, x)
						}
						for _, x := range held {
							en := x.Data.(*stressEntity)
							if !en.busy.CompareAndSwap(false, true) {
								check.errorf("entity %d handed out twice at once", en.ID())
								return
							}
							if s := x.State(); s != waitset.Queued {
								check.errorf("entity %d handed out while %v", en.ID(), s)
								return
							}
							x.Start()
							if seen := en.triggered.Load(); seen > en.seen.Load() {
								en.seen.Store(seen)
							}
							r := en.runs.Add(1)
							if runs.Add(1) > maxRuns {
								check.errorf("more than %d runs", maxRuns)
								return
							}
							if r%16 == 0 {
								// Let triggers land while the entity runs.
								runtime.Gosched()
							}
							// Every entity ends its first run with more work, so
							// that Finish(true) happens whatever the schedule.
							more := (r == 1 || r%3 == 0) && en.more.Add(-1) >= 0
							en.busy.Store(false)
							if x.Finish(more) {
								finishTrue.Add(1)
							}
						}
					}
				})
			}
			triggerers.Wait()
			close(stop)
			workers.Wait()

			require.Zero(t, check.count.Load(), "first errors: %v", drainErrs(check.errs))
			require.True(t, set.Empty())
			var triggered uint64
			for _, en := range ents {
				triggered += en.triggered.Load()
				require.Equal(t, waitset.Waiting, en.State(), "entity %d", en.ID())
				require.False(t, en.InWaitSet(), "entity %d", en.ID())
				en.mu.Lock()
				readies, enq := en.readySeq, en.enqSeq
				en.mu.Unlock()
				require.Equal(t, enq, en.runs.Load(), "entity %d: one Enqueue per run", en.ID())
				for k := uint64(1); k <= enq; k++ {
					require.True(t, readies[k], "entity %d: Enqueue %d without Ready %d", en.ID(), k, k)
				}
				served := 0
				for _, r := range readies {
					served += b2i(r)
				}
				require.Equal(t, int(enq), served, "entity %d: a Ready that no Enqueue served", en.ID())
				require.Equal(t, en.triggered.Load(), en.seen.Load(),
					"entity %d: a trigger was not followed by a run that started after it", en.ID())
			}
			require.Equal(t, uint64(tt.triggerers*tt.triggers)+uint64(tt.triggers+7)/8*2, triggered,
				"every trigger was counted (a TriggerAll step counts 3)")
			require.Equal(t, runs.Load(), obs.ready.Load(), "one run per Ready")
			require.Equal(t, runs.Load(), obs.enqueued.Load(), "one run per Enqueue")
			require.LessOrEqual(t, triggerTrue.Load()+finishTrue.Load(), obs.ready.Load())
			require.Positive(t, finishTrue.Load(), "some runs ended with the entity ready again")
			t.Logf("runs %d, ready %d, trigger true %d, finish true %d", runs.Load(), obs.ready.Load(), triggerTrue.Load(), finishTrue.Load())
		})
	}
}

func drainErrs(c chan error) []error {
	var out []error
	for {
		select {
		case err := <-c:
			out = append(out, err)
		default:
			return out
		}
	}
}
