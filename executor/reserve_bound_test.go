package executor_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// A callback held for timers waits at most about its expected run time
// from its first hold (Options.ReserveForTimers; docs/design.md,
// Priorities). Beside a timer due every millisecond, a callback of
// priority 0 that runs 10 ms falls ready while the other worker computes
// for 400 ms: each deadline comes before its expected end, so it is held,
// timer after timer, until the bound; then it starts, long before the
// other worker frees. Without the bound it would wait for that worker.
func TestReserveForTimersBound(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 2, Logger: quiet(), ReserveForTimers: true})
	bus := new(subscribers.Router)
	hotStarted := make(chan struct{}, 1)
	var hotEnd atomic.Int64
	hot, err := ex.NewOwner("hot", nil).Subscribe(bus, "hot", func(context.Context, subscribers.Message) {
		hotStarted <- struct{}{}
		busyFor(400 * time.Millisecond)
		hotEnd.Store(time.Now().UnixNano())
	}, executor.Priority(1))
	require.NoError(t, err)
	slowStarted, slowDone := make(chan time.Time, 1), make(chan struct{}, 1)
	slow, err := ex.NewOwner("slow", nil).Subscribe(bus, "slow", func(context.Context, subscribers.Message) {
		slowStarted <- time.Now()
		busyFor(10 * time.Millisecond)
		slowDone <- struct{}{}
	})
	require.NoError(t, err)
	var ticks atomic.Int64
	_, err = ex.NewOwner("tick", nil).Timer(time.Millisecond, func(context.Context, timers.Event) { ticks.Add(1) })
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	// A first run, with a worker free, gives the expected run time.
	slow.Deliver(subscribers.Message{})
	<-slowStarted
	<-slowDone
	holdsBefore := executor.Holds(ex)

	hot.Deliver(subscribers.Message{})
	<-hotStarted
	ready := time.Now()
	slow.Deliver(subscribers.Message{})
	started := <-slowStarted
	<-slowDone
	ended := hotEnd.Load()
	held := executor.Holds(ex) - holdsBefore
	t.Logf("held %d times; started %v after it fell ready; %d ticks in all", held, started.Sub(ready), ticks.Load())
	require.Positive(t, held, "held for the timers")
	require.True(t, ended == 0 || started.UnixNano() < ended, "started before the other worker freed")
}
