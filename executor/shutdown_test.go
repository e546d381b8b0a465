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

// goRun runs ex in the background and returns Run's result channel.
func goRun(ex *executor.Executor) <-chan error {
	done := make(chan error, 1)
	go func() { done <- ex.Run(context.Background()) }()
	return done
}

func TestShutdownDrainsThenReturnsNil(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 2, Logger: quiet()})
	bus := new(subscribers.Router)
	var ran atomic.Int32
	sub, err := ex.NewOwner("n", nil).Subscribe(bus, "slow", func(ctx context.Context, _ subscribers.Message) {
		time.Sleep(200 * time.Microsecond)
		ran.Add(1)
	}, executor.Depth(100))
	require.NoError(t, err)
	done := goRun(ex)
	for range 50 {
		publish(t, bus, "slow", "x")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, ex.Shutdown(ctx))
	require.Equal(t, int32(50), ran.Load(), "each accepted message ran before Shutdown returned")
	require.Zero(t, sub.Len())
	require.NoError(t, <-done)
	require.NoError(t, ex.Shutdown(ctx), "a second Shutdown returns at once")
	require.ErrorIs(t, ex.Run(context.Background()), executor.ErrRunning)
}

func TestShutdownReturnsCtxErrWhenTheDrainOutlastsIt(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 1, Logger: quiet()})
	bus := new(subscribers.Router)
	started, release := make(chan struct{}), make(chan struct{})
	var ran atomic.Int32
	_, err := ex.NewOwner("n", nil).Subscribe(bus, "stuck", func(ctx context.Context, _ subscribers.Message) {
		if ran.Add(1) == 1 {
			close(started)
			<-release
		}
	}, executor.Depth(10))
	require.NoError(t, err)
	done := goRun(ex)
	publish(t, bus, "stuck", "1")
	publish(t, bus, "stuck", "2")
	<-started

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, ex.Shutdown(ctx), context.DeadlineExceeded)
	select {
	case <-done:
		t.Fatal("Run returned while a callback was still running")
	default:
	}
	close(release) // the drain carries on: the second message still runs
	require.NoError(t, ex.Shutdown(context.Background()))
	require.NoError(t, <-done)
	require.Equal(t, int32(2), ran.Load())
}

func TestShutdownBeforeRunStopsRunAsItStarts(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 1, Logger: quiet()})
	bus := new(subscribers.Router)
	o := ex.NewOwner("n", nil)
	var got atomic.Int32
	_, err := o.Subscribe(bus, "t", func(ctx context.Context, _ subscribers.Message) { got.Add(1) })
	require.NoError(t, err)
	publish(t, bus, "t", "queued")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, ex.Shutdown(ctx), context.DeadlineExceeded, "no Run to wait for")
	require.NoError(t, ex.Run(context.Background()), "Run stops at once and drains")
	require.Equal(t, int32(1), got.Load())
	_, err = o.Timer(time.Second, func(ctx context.Context, _ timers.Event) {})
	require.ErrorIs(t, err, executor.ErrClosed)
	require.NoError(t, ex.Shutdown(context.Background()))
}

func TestShutdownDuringSpinReturnsErrRunning(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 1, Logger: quiet()})
	bus := new(subscribers.Router)
	var during error
	var calls atomic.Int32
	_, err := ex.NewOwner("n", nil).Subscribe(bus, "t", func(ctx context.Context, _ subscribers.Message) {
		if calls.Add(1) == 1 { // the first, during SpinAll
			during = ex.Shutdown(context.Background())
		}
	})
	require.NoError(t, err)
	publish(t, bus, "t", "x")
	require.Equal(t, 1, ex.SpinAll())
	require.ErrorIs(t, during, executor.ErrRunning)

	// The refused Shutdown changed nothing: Run runs until its ctx ends.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	publish(t, bus, "t", "y")
	require.Eventually(t, func() bool { return calls.Load() == 2 }, 10*time.Second, time.Millisecond, "Run runs the callbacks")
	select {
	case err := <-done:
		t.Fatalf("Run returned %v before its ctx ended", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	require.NoError(t, <-done)
}

// A callback that calls Shutdown waits for itself: it returns when its
// ctx ends, and Run then drains and returns.
func TestShutdownFromACallbackWaitsForItsCtx(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 2, Logger: quiet()})
	bus := new(subscribers.Router)
	during := make(chan error, 1)
	_, err := ex.NewOwner("n", nil).Subscribe(bus, "stop", func(ctx context.Context, _ subscribers.Message) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		during <- ex.Shutdown(ctx)
	})
	require.NoError(t, err)
	done := goRun(ex)
	publish(t, bus, "stop", "now")
	require.ErrorIs(t, <-during, context.DeadlineExceeded)
	require.NoError(t, <-done)
}
