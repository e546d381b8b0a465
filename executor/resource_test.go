package executor_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// TestResourceOppositeOrdersNeitherDeadlockNorOverlap floods callbacks that
// need {x, y}, {y, x}, {x} and {y}, from different nodes on four workers:
// ordered acquisition admits no deadlock, and no two holders of a resource
// overlap.
func TestResourceOppositeOrdersNeitherDeadlockNorOverlap(t *testing.T) {
	rec := &tracecheck.Recorder{}
	ex := executor.New(executor.Options{Workers: 4, Logger: quiet(), Observer: rec})
	x, y := ex.Resource("x"), ex.Resource("y")
	require.Same(t, x, ex.Resource("x"))
	require.Equal(t, "y", y.Name())
	require.Less(t, x.ID(), y.ID())
	bus := new(subscribers.Router)

	var inX, inY atomic.Int32
	var overlaps atomic.Int32
	enter := func(c *atomic.Int32) {
		if c.Add(1) > 1 {
			overlaps.Add(1)
		}
	}
	work := func(needX, needY bool) func(ctx context.Context, _ subscribers.Message) {
		return func(ctx context.Context, _ subscribers.Message) {
			if needX {
				enter(&inX)
			}
			if needY {
				enter(&inY)
			}
			for range 200 {
			}
			if needX {
				inX.Add(-1)
			}
			if needY {
				inY.Add(-1)
			}
		}
	}
	specs := []struct {
		topic  string
		needs  []string
		nx, ny bool
	}{
		{"a", []string{x.Name(), y.Name()}, true, true},
		{"b", []string{y.Name(), x.Name()}, true, true},
		{"c", []string{x.Name()}, true, false},
		{"d", []string{y.Name(), y.Name()}, false, true},
	}
	var runs atomic.Int64
	for i, sp := range specs {
		o := ex.NewOwner(fmt.Sprintf("node%d", i), ex.NewGroup("r", executor.Reentrant))
		cb := work(sp.nx, sp.ny)
		_, err := o.Subscribe(bus, sp.topic, func(ctx context.Context, m subscribers.Message) { cb(ctx, m); runs.Add(1) },
			executor.Needs(sp.needs...), executor.Depth(1000), executor.Overflow(subscribers.Block))
		require.NoError(t, err)
	}
	stop := run(t, ex)
	const per = 400
	var producers sync.WaitGroup
	for _, sp := range specs {
		producers.Add(1)
		go func() {
			defer producers.Done()
			p, _ := bus.Publisher(sp.topic)
			for range per {
				p.Publish(context.Background(), nil)
			}
		}()
	}
	producers.Wait()
	stop()
	require.Equal(t, int64(per*len(specs)), runs.Load())
	require.Zero(t, overlaps.Load())
	require.NoError(t, tracecheck.Check(rec.Steps(), tracecheck.Model{Workers: 4, Drained: true, Batch: executor.DefaultBatch}))
}

// TestResourceWithTimerAndGroup mixes a timer and a subscription that need
// the same resource with a mutually exclusive group.
func TestResourceWithTimerAndGroup(t *testing.T) {
	clock := timers.NewSim(epoch)
	rec := &tracecheck.Recorder{}
	ex := executor.New(executor.Options{Clock: clock, Logger: quiet(), Observer: rec})
	odom := ex.Resource("odom")
	o := ex.NewOwner("fusion", nil)
	bus := new(subscribers.Router)
	var order []string
	_, err := o.Subscribe(bus, "odom", func(ctx context.Context, _ subscribers.Message) { order = append(order, "odom") }, executor.Needs(odom.Name()))
	require.NoError(t, err)
	_, err = o.Timer(10*time.Millisecond, func(ctx context.Context, _ timers.Event) { order = append(order, "fuse") }, executor.Needs(odom.Name()))
	require.NoError(t, err)
	publish(t, bus, "odom", "")
	clock.Advance(10 * time.Millisecond)
	require.Equal(t, 2, ex.SpinAll())
	require.Equal(t, []string{"fuse", "odom"}, order)
	require.NoError(t, tracecheck.Check(rec.Steps(), tracecheck.Model{Workers: 1, Drained: true, Batch: executor.DefaultBatch}))
}
