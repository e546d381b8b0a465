package executor_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// busyFor keeps the calling goroutine's CPU for d, as a callback that
// computes does.
func busyFor(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// reserveRig is an executor of 2 workers with a callback of priority 1
// that computes for 100 ms ("hot"), one of priority 0 that computes for
// 50 ms ("slow"), and a one-shot timer; each records when it started.
type reserveRig struct {
	ex              *executor.Executor
	hot, slow       *subscribers.Subscription
	timer           *timers.Timer
	hotStarted      chan struct{}
	mu              sync.Mutex
	slowAt, timerAt []time.Time
	slowDone        int
	cancel          context.CancelFunc
	done            chan error
}

func newReserveRig(t *testing.T, reserve bool) *reserveRig {
	r := &reserveRig{hotStarted: make(chan struct{}, 1), done: make(chan error, 1)}
	r.ex = executor.New(executor.Options{Workers: 2, Logger: quiet(), ReserveForTimers: reserve})
	bus := new(subscribers.Router)
	var err error
	r.hot, err = r.ex.NewOwner("hot", nil).Subscribe(bus, "hot", func(context.Context, subscribers.Message) {
		r.hotStarted <- struct{}{}
		busyFor(100 * time.Millisecond)
	}, executor.Priority(1))
	require.NoError(t, err)
	r.slow, err = r.ex.NewOwner("slow", nil).Subscribe(bus, "slow", func(context.Context, subscribers.Message) {
		r.mu.Lock()
		r.slowAt = append(r.slowAt, time.Now())
		r.mu.Unlock()
		busyFor(50 * time.Millisecond)
		r.mu.Lock()
		r.slowDone++
		r.mu.Unlock()
	})
	require.NoError(t, err)
	r.timer, err = r.ex.NewOwner("timer", nil).OneShot(time.Hour, func(_ context.Context, ev timers.Event) {
		r.mu.Lock()
		r.timerAt = append(r.timerAt, ev.Expected, time.Now())
		r.mu.Unlock()
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- r.ex.Run(ctx) }()
	t.Cleanup(func() {
		r.cancel()
		require.NoError(t, <-r.done)
	})
	return r
}

// waitFor waits until the slow callback has ended n runs in all, and
// the timer run once from the second on.
func (r *reserveRig) waitFor(t *testing.T, n int) {
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.slowDone >= n && (n < 2 || len(r.timerAt) == 2)
	}, 5*time.Second, time.Millisecond)
}

// round runs the hot callback, and while it computes arms the timer 8 ms
// ahead and readies the slow one; it returns when both started, with the
// lateness of the timer's start and the slow callback's start after the
// timer's.
func (r *reserveRig) round(t *testing.T) (timerLate, slowAfter time.Duration) {
	r.hot.Deliver(subscribers.Message{})
	<-r.hotStarted
	r.timer.ResetAt(time.Now().Add(8 * time.Millisecond))
	r.slow.Deliver(subscribers.Message{})
	r.waitFor(t, 2)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.timerAt[1].Sub(r.timerAt[0]), r.slowAt[1].Sub(r.timerAt[1])
}

// With ReserveForTimers, a worker does not start a callback of priority
// 0 that would run past a timer's deadline while the other worker
// computes: the timer starts first, without waiting for the callback's
// 50 ms, and the callback after it. Without, the timer waits for the
// callback. (The bounds leave the test's machine stalls of 20 ms.)
func TestReserveForTimers(t *testing.T) {
	for _, reserve := range []bool{true, false} {
		r := newReserveRig(t, reserve)
		// A first run of the slow callback gives its expected run time.
		r.slow.Deliver(subscribers.Message{})
		r.waitFor(t, 1)
		timerLate, slowAfter := r.round(t)
		t.Logf("reserve %v: the timer %v late, the slow callback %v after it", reserve, timerLate, slowAfter)
		if reserve {
			require.Positive(t, slowAfter, "the timer first")
			require.Positive(t, executor.Holds(r.ex))
			require.Less(t, timerLate, 20*time.Millisecond, "the timer not behind the slow callback")
		} else {
			require.Negative(t, slowAfter, "the slow callback first")
			require.Zero(t, executor.Holds(r.ex))
			require.Greater(t, timerLate, 30*time.Millisecond, "the timer behind the slow callback")
		}
	}
}

// Under random loads of subscriptions and timers, with ReserveForTimers
// every message is served once and the executor drains: holding a
// callback for a timer loses nothing and stalls nothing, also beside
// mutually exclusive groups, a resource and priority workers.
func TestReserveForTimersServesEverything(t *testing.T) {
	holds := 0
	for round := range 8 {
		rng := rand.New(rand.NewPCG(uint64(round), 7))
		ex := executor.New(executor.Options{Workers: 2, PriorityWorkers: round % 2, Logger: quiet(), ReserveForTimers: true})
		bus := new(subscribers.Router)
		group := ex.NewGroup("shared", executor.MutuallyExclusive)
		var ran atomic.Int64
		var subs []*subscribers.Subscription
		for i := range 5 {
			d := time.Duration(rng.IntN(1500)) * time.Microsecond
			opts := []executor.Option{executor.Priority(rng.IntN(2)), executor.Depth(1000), executor.Overflow(subscribers.Block)}
			switch rng.IntN(3) {
			case 1:
				opts = append(opts, executor.InGroup(group))
			case 2:
				opts = append(opts, executor.Needs("arm"))
			}
			s, err := ex.NewOwner("sub", nil).Subscribe(bus, string(rune('a'+i)), func(context.Context, subscribers.Message) {
				busyFor(d)
				ran.Add(1)
			}, opts...)
			require.NoError(t, err)
			subs = append(subs, s)
		}
		for i := range 3 {
			period := time.Duration(1+rng.IntN(4)) * time.Millisecond
			d := time.Duration(rng.IntN(200)) * time.Microsecond
			var opts []executor.Option
			if i == 0 {
				opts = append(opts, executor.InGroup(group))
			}
			_, err := ex.NewOwner("timer", nil).Timer(period, func(context.Context, timers.Event) { busyFor(d) }, opts...)
			require.NoError(t, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- ex.Run(ctx) }()
		sent := 0
		for start := time.Now(); time.Since(start) < 120*time.Millisecond; sent++ {
			subs[rng.IntN(len(subs))].Deliver(subscribers.Message{})
			time.Sleep(time.Duration(rng.IntN(600)) * time.Microsecond)
		}
		require.Eventually(t, func() bool { return ran.Load() == int64(sent) }, 10*time.Second, time.Millisecond,
			"round %d: every message served (%d of %d)", round, ran.Load(), sent)
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the executor did not drain", round)
		}
		holds += executor.Holds(ex)
	}
	t.Logf("%d holds in all", holds)
	require.Positive(t, holds, "the loads made workers hold callbacks for timers")
}
