package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
)

type key struct{}

// A run's context is done when the run ends (Canceled) or when its Stop
// is done first (DeadlineExceeded), Done closing either way; it carries
// Stop's values; a publication under it, or under a context derived from
// it, is the run's until then and refused after.
func TestRunContext(t *testing.T) {
	router := new(bus.Router)
	sub := newSub(t, "t", bus.Options{Depth: 1, Overflow: bus.Block})
	require.NoError(t, router.Attach(sub))
	pub, err := router.Publisher("t")
	require.NoError(t, err)

	stop, expire := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	defer expire()
	scope := &bus.RunScope{Stop: stop}
	r := scope.NewRun()
	require.NoError(t, r.Err())
	require.Equal(t, "v", r.Value(key{}))
	require.Same(t, r, bus.RunOf(r))
	derived, cancel := context.WithCancel(r)
	require.Same(t, r, bus.RunOf(derived))
	// A run's publications go past the depth and report the overload.
	for range 3 {
		require.NoError(t, pub.Publish(derived, nil))
	}
	require.Equal(t, 3, sub.Len())
	cancel()
	require.ErrorIs(t, pub.Publish(derived, nil), context.Canceled, "a derived context's own end")
	done := r.Done()
	require.Same(t, sub, r.End(), "the subscription it left overloaded")
	<-done
	require.ErrorIs(t, r.Err(), context.Canceled)
	require.ErrorIs(t, pub.Publish(r, nil), context.Canceled, "refused once the run ended")
	require.Equal(t, 3, sub.Len())

	r2 := scope.NewRun()
	done2 := r2.Done()
	expire()
	select {
	case <-done2:
	case <-time.After(10 * time.Second):
		t.Fatal("Done did not close when Stop ended")
	}
	require.ErrorIs(t, r2.Err(), context.DeadlineExceeded)
	require.ErrorIs(t, pub.Publish(r2, nil), context.DeadlineExceeded)
	require.Nil(t, r2.End())
	require.Nil(t, bus.RunOf(context.Background()))
}

// Under a context that is not a run's, a publication into a full Block
// queue waits for room until the context is done, then returns its error;
// one under a context already done is refused at once.
func TestPublishWaitsUnderItsContext(t *testing.T) {
	router := new(bus.Router)
	sub := newSub(t, "t", bus.Options{Depth: 1, Overflow: bus.Block})
	require.NoError(t, router.Attach(sub))
	pub, err := router.Publisher("t")
	require.NoError(t, err)
	require.NoError(t, pub.Publish(context.Background(), nil))
	// start is read before the context is made: a goroutine descheduled
	// between the two would otherwise see less than the timeout pass.
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, pub.Publish(ctx, nil), context.DeadlineExceeded)
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
	require.ErrorIs(t, pub.Publish(ctx, nil), context.DeadlineExceeded, "refused at once")
	require.Equal(t, 1, sub.Len())
	require.EqualValues(t, 1, sub.Stats().Accepted)
}
