package broker

import (
	"net"
	"testing"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"
)

// A connection replaced by another with its client ID has its will voided
// (not retained, on a topic no wildcard matches); another's will is kept.
func TestStaleWillVoided(t *testing.T) {
	srv := mochi.New(&mochi.Options{})
	h := newStaleWillHook(srv)
	conn := func() net.Conn {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return a
	}
	old := srv.NewClient(conn(), "t", "robot", false)
	srv.Clients.Add(old)
	other := srv.NewClient(conn(), "t", "other", false)
	srv.Clients.Add(other)
	will := mochi.Will{TopicName: "robotexec/robot/status", Payload: []byte("offline"), Retain: true, Flag: 1}

	got, err := h.OnWill(old, will)
	require.NoError(t, err)
	require.Equal(t, will, got, "not replaced: the will stands")

	h.OnSessionEstablish(srv.NewClient(conn(), "t", "robot", false), packets.Packet{})
	got, err = h.OnWill(old, will)
	require.NoError(t, err)
	require.Equal(t, voidTopic, got.TopicName)
	require.False(t, got.Retain)
	got, err = h.OnWill(other, will)
	require.NoError(t, err)
	require.Equal(t, will, got)

	h.OnDisconnect(old, nil, false)
	require.Empty(t, h.replaced)
}
