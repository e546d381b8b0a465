package executor_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
)

// A worker that takes a callback of a busy mutually exclusive group hands it
// over and goes on with other work: here the other group's callback must run
// while the first group is busy, or the test times out.
func TestMutuallyExclusiveGroupNeverBlocksAWorker(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 2, Logger: quiet()})
	a := ex.NewOwner("a", nil)
	b := ex.NewOwner("b", nil)
	bus := new(subscribers.Router)
	started := make(chan struct{})
	release := make(chan struct{})
	errs := make(chan error, 4)
	var a2ran atomic.Bool
	_, err := a.Subscribe(bus, "a1", func(ctx context.Context, _ subscribers.Message) {
		close(started)
		select {
		case <-release:
		case <-time.After(10 * time.Second):
			errs <- errors.New("b's callback never ran while group a was busy")
		}
	})
	require.NoError(t, err)
	_, err = a.Subscribe(bus, "a2", func(ctx context.Context, _ subscribers.Message) { a2ran.Store(true) })
	require.NoError(t, err)
	_, err = b.Subscribe(bus, "b", func(ctx context.Context, _ subscribers.Message) {
		if a2ran.Load() {
			errs <- errors.New("a2 overlapped a1 in a mutually exclusive group")
		}
		close(release)
	})
	require.NoError(t, err)
	stop := run(t, ex)
	publish(t, bus, "a1", "")
	<-started
	publish(t, bus, "a2", "")
	publish(t, bus, "b", "")
	stop()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.True(t, a2ran.Load(), "a2 ran after a1")
}

func TestReentrantGroupLetsDifferentCallbacksOverlap(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 2, Logger: quiet()})
	o := ex.NewOwner("n", ex.NewGroup("r", executor.Reentrant))
	bus := new(subscribers.Router)
	var wg sync.WaitGroup
	wg.Add(2)
	overlapped := make(chan bool, 2)
	cb := func(ctx context.Context, _ subscribers.Message) {
		wg.Done()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
			overlapped <- true
		case <-time.After(10 * time.Second):
			overlapped <- false
		}
	}
	_, err := o.Subscribe(bus, "x", cb)
	require.NoError(t, err)
	_, err = o.Subscribe(bus, "y", cb)
	require.NoError(t, err)
	run(t, ex)
	publish(t, bus, "x", "")
	publish(t, bus, "y", "")
	require.True(t, <-overlapped)
	require.True(t, <-overlapped)
}

func TestMutuallyExclusiveCallbacksNeverOverlap(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 4, Logger: quiet()})
	o := ex.NewOwner("n", nil)
	bus := new(subscribers.Router)
	var inside, maxInside atomic.Int32
	var runs atomic.Int32
	for i := range 4 {
		_, err := o.Subscribe(bus, fmt.Sprintf("t/%d", i), func(ctx context.Context, _ subscribers.Message) {
			n := inside.Add(1)
			if n > maxInside.Load() {
				maxInside.Store(n)
			}
			for range 1000 {
			}
			inside.Add(-1)
			runs.Add(1)
		}, executor.Depth(1000))
		require.NoError(t, err)
	}
	stop := run(t, ex)
	for i := range 2000 {
		publish(t, bus, fmt.Sprintf("t/%d", i%4), "")
	}
	stop()
	require.Equal(t, int32(2000), runs.Load())
	require.Equal(t, int32(1), maxInside.Load())
}
