package nodes_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
)

// The node API's options are the executor's: an executor.Option applies
// to a node's callback, and a resource named by executor.Needs is the one
// executor.Needs and Executor.Resource name.
func TestOptionsAreTheExecutors(t *testing.T) {
	r := newRig(t)
	var sub, defaults *subscribers.Subscription
	typ := register(func(n *nodes.Node) error {
		sub = n.Subscribe("a", func(ctx context.Context, _ subscribers.Message) {}, executor.Depth(3), executor.Name("fast"), executor.Needs("odom"))
		defaults = n.Subscribe("b", func(ctx context.Context, _ subscribers.Message) {})
		return nil
	})
	_, err := nodes.Build(context.Background(), r.env, nodes.Spec{Name: "n", Type: typ})
	require.NoError(t, err)
	require.Equal(t, 3, sub.Options().Depth)
	require.Equal(t, subscribers.Block, sub.Options().Overflow, "the node's default at QoS 1")
	require.Equal(t, 10, defaults.Options().Depth, "the Env's depth, not the executor's default")

	cbs := r.ex.Callbacks()
	names := map[string]bool{}
	for _, cb := range cbs {
		names[cb.Name] = true
	}
	require.True(t, names["fast"], "named by executor.Name: %v", names)
}

// SubscribeSelf's own Made does not replace the node author's.
func TestMadeOptionsChain(t *testing.T) {
	r := newRig(t)
	var made, self *subscribers.Subscription
	opts := make([]executor.Option, 0, 4) // room to spare: SubscribeSelf must not write into it
	opts = append(opts, executor.Made(func(s *subscribers.Subscription) { made = s }))
	typ := register(func(n *nodes.Node) error {
		self = n.SubscribeSelf("a", func(context.Context, *subscribers.Subscription, subscribers.Message) {}, opts...)
		return nil
	})
	_, err := nodes.Build(context.Background(), r.env, nodes.Spec{Name: "n", Type: typ})
	require.NoError(t, err)
	require.NotNil(t, self)
	require.Same(t, self, made)
	require.Len(t, opts, 1)
	require.Len(t, opts[:2], 2)
	require.Nil(t, opts[:2][1], "SubscribeSelf appended into the caller's slice")
}
