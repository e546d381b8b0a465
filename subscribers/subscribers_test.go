package subscribers_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/subscribers"
)

// The public names are the bus's: each function answers as the bus does.
func TestPublicNames(t *testing.T) {
	p, err := subscribers.ParsePolicy("block")
	require.NoError(t, err)
	require.Equal(t, subscribers.Block, p)
	_, err = subscribers.ParsePolicy("keep_all")
	require.Error(t, err)

	require.NoError(t, subscribers.ValidateFilter("robot/+/odom"))
	require.Error(t, subscribers.ValidateFilter("robot/#/odom"))
	require.NoError(t, subscribers.ValidateTopic("robot/7/odom"))

	r := subscribers.NewRouter(subscribers.RouterOptions{MaxPayload: 4})
	pub, err := r.Publisher("robot/mode", subscribers.WithQoS(1), subscribers.WithRetain())
	require.NoError(t, err)
	m := pub.Message([]byte("auto"))
	require.Equal(t, byte(1), m.QoS)
	require.True(t, m.Retained)
	require.ErrorIs(t, pub.Publish(context.Background(), []byte("manual")), subscribers.ErrTooLarge)
	require.Equal(t, "queue_full", subscribers.QueueFull.String())
}
