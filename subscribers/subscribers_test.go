package subscribers_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/subscribers"
)

// The public names answer as the message path does.
func TestPublicNames(t *testing.T) {
	var p subscribers.Policy
	require.NoError(t, p.UnmarshalText([]byte("block")))
	require.Equal(t, subscribers.Block, p)
	require.Equal(t, "block", p.String())
	require.Error(t, p.UnmarshalText([]byte("keep_all")))

	require.NoError(t, subscribers.ValidateFilter("robot/+/odom"))
	require.Error(t, subscribers.ValidateFilter("robot/#/odom"))
	require.NoError(t, subscribers.ValidateTopic("robot/7/odom"))

	r := subscribers.NewRouter(subscribers.RouterOptions{MaxPayload: 4})
	pub, err := r.Publisher("robot/mode")
	require.NoError(t, err)
	require.Equal(t, "robot/mode", pub.Topic())
	require.ErrorIs(t, pub.Publish(context.Background(), []byte("manual")), subscribers.ErrTooLarge)
	require.EqualValues(t, 1, r.TooLarge())
	require.Equal(t, "queue_full", subscribers.QueueFull.String())
}
