package nodes_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
)

// Publish on more distinct topics than the node keeps publishers for:
// every publication is delivered, evicted topics included, and a bad
// topic fails that publication only.
func TestPublishManyTopics(t *testing.T) {
	r := newRig(t)
	var n *nodes.Node
	typ := register(func(node *nodes.Node) error { n = node; return nil })
	_, err := nodes.Build(context.Background(), r.env, nodes.Spec{Name: "n", Type: typ})
	require.NoError(t, err)
	var got []string
	_, err = r.ex.NewOwner("collector", nil).Subscribe(r.bus, "t/#", func(ctx context.Context, m subscribers.Message) { got = append(got, m.Topic) })
	require.NoError(t, err)

	const topics = 1024 + 5 // past the publishers a node keeps
	var want []string
	for i := range topics + 1 {
		topic := fmt.Sprintf("t/%d", i%topics) // the last is t/0 again, evicted
		require.NoError(t, n.Publish(context.Background(), topic, []byte("x")))
		want = append(want, topic)
		r.ex.SpinAll()
	}
	require.Equal(t, want, got)
	require.ErrorContains(t, n.Publish(context.Background(), "t/+", []byte("x")), "wildcards")
	require.NoError(t, n.Publish(context.Background(), "t/ok", []byte("x")), "the node goes on")
}
