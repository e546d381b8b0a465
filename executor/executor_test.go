package executor_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// run starts ex.Run and returns a function that stops it and waits.
func run(t *testing.T, ex *executor.Executor) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(20 * time.Second):
				t.Fatal("Run did not return after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func publish(t *testing.T, bus *subscribers.Router, topic, payload string) {
	t.Helper()
	_, err := bus.Publish(context.Background(), subscribers.Message{Topic: topic, Payload: []byte(payload)})
	require.NoError(t, err)
}

func TestSpinSomeRunsTimersFirst(t *testing.T) {
	clock := timers.NewSim(epoch)
	ex := executor.New(executor.Options{Clock: clock, Logger: quiet()})
	o := ex.NewOwner("n", nil)
	bus := new(subscribers.Router)
	var order []string
	for _, name := range []string{"s1", "s2"} {
		_, err := o.Subscribe(bus, name, func(ctx context.Context, m subscribers.Message) { order = append(order, m.Topic) })
		require.NoError(t, err)
	}
	for _, name := range []string{"t1", "t2"} {
		_, err := o.Timer(10*time.Millisecond, func(ctx context.Context, _ timers.Event) { order = append(order, name) })
		require.NoError(t, err)
	}
	// Subscriptions become ready before the timers, yet the batch runs the
	// timers first.
	publish(t, bus, "s2", "a")
	publish(t, bus, "s1", "b")
	clock.Advance(10 * time.Millisecond)
	require.Equal(t, 4, ex.SpinSome())
	require.Equal(t, []string{"t1", "t2", "s2", "s1"}, order)
	require.Zero(t, ex.SpinSome())
	require.Equal(t, uint64(4), ex.Stats().Runs)
}

func TestSubscriptionWithMoreWorkGoesToTheBack(t *testing.T) {
	ex := executor.New(executor.Options{Logger: quiet()})
	o := ex.NewOwner("n", nil)
	bus := new(subscribers.Router)
	var order []string
	for _, name := range []string{"a", "b"} {
		_, err := o.Subscribe(bus, name, func(ctx context.Context, m subscribers.Message) { order = append(order, m.Topic+string(m.Payload)) })
		require.NoError(t, err)
	}
	publish(t, bus, "a", "1")
	publish(t, bus, "a", "2")
	publish(t, bus, "a", "3")
	publish(t, bus, "b", "1")
	require.Equal(t, 6, ex.SpinAll()+2) // four messages; SpinAll returns the runs
	require.Equal(t, []string{"a1", "b1", "a2", "a3"}, order)
}

func TestPanicIsRecoveredLoggedAndCounted(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	ex := executor.New(executor.Options{Workers: 2, Logger: logger})
	o := ex.NewOwner("imu", nil)
	bus := new(subscribers.Router)
	got := make(chan string, 10)
	_, err := o.Subscribe(bus, "imu/raw", func(ctx context.Context, m subscribers.Message) {
		if string(m.Payload) == "bad" {
			panicInCallback()
		}
		got <- string(m.Payload)
	}, executor.Name("filter"))
	require.NoError(t, err)
	stop := run(t, ex)
	publish(t, bus, "imu/raw", "bad")
	publish(t, bus, "imu/raw", "good")
	select {
	case p := <-got:
		require.Equal(t, "good", p)
	case <-time.After(10 * time.Second):
		t.Fatal("the executor did not carry on after a panic")
	}
	stop()
	require.Equal(t, uint64(1), ex.Stats().Panics)
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, logs.String(), "callback panicked")
	require.Contains(t, logs.String(), "node=imu")
	require.Contains(t, logs.String(), "callback=filter")
	require.Contains(t, logs.String(), "panicInCallback", "the log carries the stack")
}

func panicInCallback() { panic("boom") }

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestRunDrainsAcceptedMessagesAndRefusesLaterOnes(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 2, Logger: quiet()})
	o := ex.NewOwner("n", nil)
	bus := new(subscribers.Router)
	var ran atomic.Int32
	sub, err := o.Subscribe(bus, "slow", func(ctx context.Context, _ subscribers.Message) {
		time.Sleep(200 * time.Microsecond)
		ran.Add(1)
	}, executor.Depth(100))
	require.NoError(t, err)
	stop := run(t, ex)
	for range 50 {
		publish(t, bus, "slow", "x")
	}
	stop() // cancels at once: the 50 accepted messages still run
	require.Equal(t, int32(50), ran.Load())
	require.Zero(t, sub.Len())

	// Closed subscriptions are detached from their source; a delivery that
	// races with the close is refused and counted.
	publish(t, bus, "slow", "late")
	require.False(t, sub.Deliver(subscribers.Message{Topic: "slow"}))
	st := sub.Stats()
	require.Equal(t, uint64(50), st.Accepted)
	require.Equal(t, uint64(1), st.Dropped[subscribers.Closed])

	_, err = o.Subscribe(bus, "x", func(ctx context.Context, _ subscribers.Message) {})
	require.ErrorIs(t, err, executor.ErrClosed)
	_, err = o.Timer(time.Second, func(ctx context.Context, _ timers.Event) {})
	require.ErrorIs(t, err, executor.ErrClosed)
	require.ErrorIs(t, ex.Run(context.Background()), executor.ErrRunning)
}

func TestRunStopsTimers(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 1, Logger: quiet()})
	o := ex.NewOwner("n", nil)
	tm, err := o.Timer(time.Millisecond, func(ctx context.Context, _ timers.Event) {})
	require.NoError(t, err)
	stop := run(t, ex)
	stop()
	require.True(t, tm.Canceled())
}

func TestSpinDuringRunPanics(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 1, Logger: quiet()})
	ticked := make(chan struct{}, 1)
	_, err := ex.NewOwner("n", nil).Timer(time.Millisecond, func(ctx context.Context, _ timers.Event) {
		select {
		case ticked <- struct{}{}:
		default:
		}
	})
	require.NoError(t, err)
	run(t, ex)
	<-ticked // Run is running
	require.PanicsWithValue(t, "executor: spin while running or spinning", func() { ex.SpinSome() })
}

func TestSpinOnceWaitsForWork(t *testing.T) {
	ex := executor.New(executor.Options{Logger: quiet()})
	o := ex.NewOwner("n", nil)
	bus := new(subscribers.Router)
	got := make(chan string, 1)
	_, err := o.Subscribe(bus, "x", func(ctx context.Context, m subscribers.Message) { got <- string(m.Payload) })
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, ex.SpinOnce(ctx), context.DeadlineExceeded)

	go func() {
		time.Sleep(time.Millisecond)
		bus.Publish(context.Background(), subscribers.Message{Topic: "x", Payload: []byte("hello")})
	}()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	require.NoError(t, ex.SpinOnce(ctx2))
	require.Equal(t, "hello", <-got)
}

func TestRegistrationErrors(t *testing.T) {
	ex := executor.New(executor.Options{Logger: quiet()})
	o := ex.NewOwner("n", nil)
	bus := new(subscribers.Router)
	_, err := o.Subscribe(bus, "a/#/b", func(ctx context.Context, _ subscribers.Message) {})
	require.ErrorContains(t, err, `"a/#/b"`)
	_, err = o.Subscribe(bus, "a", nil)
	require.Error(t, err)
	_, err = o.Timer(0, func(ctx context.Context, _ timers.Event) {})
	require.Error(t, err)
	_, err = o.Timer(time.Second, nil)
	require.Error(t, err)
	_, err = o.OneShot(-time.Second, func(ctx context.Context, _ timers.Event) {})
	require.Error(t, err)
}

func TestOwnerAndCallbackNames(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 3, Logger: quiet()})
	require.Equal(t, 3, ex.Workers())
	require.NotNil(t, ex.Clock())
	g := ex.NewGroup("sensors", executor.Reentrant)
	require.Equal(t, "sensors", g.Name())
	require.Equal(t, executor.Reentrant, g.Kind())
	require.Equal(t, "reentrant", g.Kind().String())
	require.Equal(t, "mutually_exclusive", executor.MutuallyExclusive.String())
	o := ex.NewOwner("imu", g)
	require.Equal(t, "imu", o.Name())
	require.Same(t, g, o.DefaultGroup())
	require.Same(t, ex, o.Executor())
	require.Equal(t, executor.MutuallyExclusive, ex.NewOwner("x", nil).DefaultGroup().Kind())

	s, err := o.Subscribe(new(subscribers.Router), "imu/+", func(ctx context.Context, _ subscribers.Message) {}, executor.Name("lowpass"))
	require.NoError(t, err)
	cb, ok := ex.Callback(s.ID())
	require.True(t, ok)
	require.Equal(t, "imu", cb.Owner)
	require.Equal(t, "lowpass", cb.Name)
	require.Same(t, s, cb.Subscription)
	tm, err := o.Timer(time.Hour, func(ctx context.Context, _ timers.Event) {})
	require.NoError(t, err)
	cb, ok = ex.Callback(tm.ID())
	require.True(t, ok)
	require.Equal(t, "timer(1h0m0s)", cb.Name)
	require.Equal(t, tm.ID(), cb.ID)
	_, ok = ex.Callback(1 << 40)
	require.False(t, ok)
}

func TestCallbacksListsRegistrations(t *testing.T) {
	ex := executor.New(executor.Options{Logger: quiet()})
	o := ex.NewOwner("imu", nil)
	bus := new(subscribers.Router)
	s, err := o.Subscribe(bus, "imu/raw", func(ctx context.Context, _ subscribers.Message) { panic("x") }, executor.Name("filter"))
	require.NoError(t, err)
	tm, err := o.Timer(time.Second, func(ctx context.Context, _ timers.Event) {})
	require.NoError(t, err)
	publish(t, bus, "imu/raw", "")
	ex.SpinAll()
	cbs := ex.Callbacks()
	require.Len(t, cbs, 2)
	require.Equal(t, executor.Callback{ID: s.ID(), Owner: "imu", Name: "filter", Group: "imu", Subscription: s, Panics: 1}, cbs[0])
	require.Same(t, tm, cbs[1].Timer)
	require.Nil(t, cbs[1].Subscription)
}
