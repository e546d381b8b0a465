package executor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
)

// Made gives the subscription before it is attached: a retained message,
// delivered while attaching, finds it already known.
func TestMadeBeforeAttach(t *testing.T) {
	ex := executor.New(executor.Options{Workers: 1})
	bus := new(subscribers.Router)
	_, err := bus.Publish(context.Background(), subscribers.Message{Topic: "state/mode", Payload: []byte("auto"), Retained: true})
	require.NoError(t, err)

	var made *subscribers.Subscription
	var seen []*subscribers.Subscription
	s, err := ex.NewOwner("n", nil).Subscribe(bus, "state/+", func(ctx context.Context, _ subscribers.Message) {
		seen = append(seen, made)
	}, executor.Made(func(s *subscribers.Subscription) {
		require.Zero(t, s.Len(), "not attached yet: nothing delivered")
		made = s
	}))
	require.NoError(t, err)
	require.Same(t, s, made)
	require.Equal(t, 1, s.Len(), "the retained message, delivered on attaching")
	require.Equal(t, 1, ex.SpinAll())
	require.Equal(t, []*subscribers.Subscription{s}, seen)
}
