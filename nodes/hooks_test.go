package nodes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/nodehooks"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// TestCountedHook: the Counted and Rings hooks learn each subscription and
// one-shot timer of a node under its key (kind, name, and a number for a
// repeated one), and a run they refuse does not call the callback: the
// first subscription to "a" may run once, the one-shot named by its delay
// never, the one named t when called at its deadline. A message skipped
// is not handled: the Handling hook does not see it.
func TestCountedHook(t *testing.T) {
	r := newRig(t)
	var keys []string
	limits := map[string]int{"subscription a": 1}
	handled := 0
	hooks := &nodehooks.Hooks{Handling: func(_ context.Context, _ string, k uint64, done bool) {
		if done {
			require.Equal(t, uint64(handled), k)
			handled++
		}
	}, Counted: func(node, key string) func() bool {
		require.Equal(t, "n", node)
		keys = append(keys, key)
		limit, ok := limits[key]
		if !ok {
			return nil
		}
		return func() bool {
			limit--
			return limit >= 0
		}
	}, Rings: func(node, key string) func(timers.Event) bool {
		require.Equal(t, "n", node)
		keys = append(keys, key)
		return func(ev timers.Event) bool {
			require.Equal(t, epoch.Add(5*time.Millisecond), ev.Expected)
			return key == "one-shot t"
		}
	}}
	ran := map[string]int{}
	typ := register(func(n *nodes.Node) error {
		n.Subscribe("a", func(ctx context.Context, _ subscribers.Message) { ran["a"]++ })
		n.Subscribe("a", func(ctx context.Context, _ subscribers.Message) { ran["a #2"]++ })
		n.Subscribe("b", func(ctx context.Context, _ subscribers.Message) { ran["b"]++ }, executor.Name("named"))
		n.OneShot(5*time.Millisecond, func(ctx context.Context, _ timers.Event) { ran["once"]++ })
		n.OneShot(5*time.Millisecond, func(ctx context.Context, _ timers.Event) { ran["t"]++ }, executor.Name("t"))
		return nil
	})
	_, err := nodes.Build(nodehooks.With(context.Background(), hooks), r.env, nodes.Spec{Name: "n", Type: typ})
	require.NoError(t, err)
	require.Equal(t, []string{"subscription a", "subscription a #2", "subscription named", "one-shot timer(5ms)", "one-shot t"}, keys)

	a, err := r.bus.Publisher("a")
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, a.Publish(context.Background(), []byte("x")))
	}
	b, err := r.bus.Publisher("b")
	require.NoError(t, err)
	require.NoError(t, b.Publish(context.Background(), []byte("y")))
	r.clock.Advance(10 * time.Millisecond)
	r.ex.SpinAll()
	require.Equal(t, map[string]int{"a": 1, "a #2": 3, "b": 1, "t": 1}, ran)
	require.Equal(t, 5, handled, "the messages that ran")
}
