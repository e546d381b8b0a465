package timerq_test

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/waitset"
)

// TestStagingUnderConcurrentControl runs timers of close deadlines on a
// queue that stages them (leadDeaf), with two pollers that serve and call
// them as workers do, while two goroutines cancel, reset and re-arm them at
// random. After each round's changes, while the pollers go on, no armed
// timer may stay behind its deadline; then, with the pollers stopped, every
// timer is re-armed on one deadline: the queue must hold each exactly once
// (Len), and that deadline must trigger each exactly once, whatever the
// round left staged or due. Bounded by rounds of 400 changes each.
func TestStagingUnderConcurrentControl(t *testing.T) {
	const n, rounds = 16, 12
	q, set, tms := stagingQueue(t, n, 300*time.Microsecond)
	index := make(map[*waitset.Entity]int, n)
	for i, tm := range tms {
		index[timerq.Entity(tm)] = i
		tm.Reset()
	}
	for round := range rounds {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 2 { // pollers: serve, take, call
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					q.Fast().PollWait()
					var run waitset.List
					set.Take(&run)
					for x := run.Pop(); x != nil; x = run.Pop() {
						x.Start()
						timerq.Call(tms[index[x]])
						x.Finish(false)
					}
				}
			}()
		}
		var control sync.WaitGroup
		for g := range 2 { // control
			control.Add(1)
			go func() {
				defer control.Done()
				r := rand.New(rand.NewPCG(uint64(round), uint64(g)))
				for range 400 {
					tm := tms[r.IntN(n)]
					switch r.IntN(4) {
					case 0:
						tm.Cancel()
					case 1:
						tm.Reset()
					case 2:
						tm.ResetAt(time.Now().Add(time.Duration(r.IntN(500)) * time.Microsecond))
					default:
						tm.Deadline()
					}
					if r.IntN(8) == 0 {
						time.Sleep(50 * time.Microsecond)
					}
				}
			}()
		}
		control.Wait()
		// The pollers go on: every armed timer is served and re-armed,
		// none stays behind in the heap or staged. A deadline left more
		// than 50 ms behind is one that nothing serves.
		time.Sleep(60 * time.Millisecond)
		for i, tm := range tms {
			if d, ok := tm.Deadline(); ok {
				require.Greater(t, d, time.Now().Add(-50*time.Millisecond), "round %d: timer %d is not served", round, i)
			}
		}
		close(stop)
		wg.Wait()

		// Quiesce: drain what the round left due, re-arm all on d.
		var run waitset.List
		set.Take(&run)
		for x := run.Pop(); x != nil; x = run.Pop() {
			x.Start()
			x.Finish(false)
		}
		d := time.Now().Add(5 * time.Millisecond)
		for _, tm := range tms {
			tm.ResetAt(d)
		}
		require.Equal(t, n, q.Len(), "round %d: every timer armed once", round)
		time.Sleep(time.Until(d) + time.Millisecond)
		for q.Fast().PollWait() {
		}
		set.Take(&run)
		seen := make(map[int]bool, n)
		for x := run.Pop(); x != nil; x = run.Pop() {
			i := index[x]
			require.False(t, seen[i], "round %d: timer %d triggered twice", round, i)
			seen[i] = true
			x.Start()
			_, ok := timerq.Call(tms[i])
			require.True(t, ok, "round %d: timer %d", round, i)
			x.Finish(false)
		}
		require.Len(t, seen, n, "round %d: the deadline triggered every timer", round)
	}
}
