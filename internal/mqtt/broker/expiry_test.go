package broker_test

import (
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
)

// An MQTT 5 session that expires takes its subscriptions with it: it no
// longer counts as audience, and a client that connects later with its
// client ID gets a new session, without them.
func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	defer b.Close()
	a := b.AudienceOf("self")
	connect := packets.Packet{
		Connect:    packets.ConnectParams{ClientIdentifier: "sub", Keepalive: 30},
		Properties: packets.Properties{SessionExpiryInterval: 1, SessionExpiryIntervalFlag: true},
	}
	c := dialRaw(t, b.Addr(), 5, connect)
	c.subscribe("e/#")
	require.True(t, a.Wanted("e/x"))

	gen := a.Generation()
	c.send(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Disconnect}})
	require.Eventually(t, func() bool { return a.Generation() != gen }, 10*time.Second, time.Millisecond, "disconnection")
	// The session expires a second after its client left, at the
	// earliest.
	require.True(t, a.Wanted("e/x"), "an offline session's subscription")
	gen = a.Generation()
	require.Eventually(t, func() bool { return a.Generation() != gen }, 10*time.Second, 10*time.Millisecond, "expiry")
	require.False(t, a.Wanted("e/x"), "an expired session's subscription")

	c = dialRaw(t, b.Addr(), 5, connect)
	require.False(t, c.present, "session present after expiry")
	c.subscribe("sync")
	pub, err := pahoClient(t, b, "pub", "", "")
	require.NoError(t, err)
	for _, topic := range []string{"e/x", "sync"} {
		tok := pub.Publish(topic, 1, false, "x")
		require.True(t, tok.WaitTimeout(10*time.Second))
		require.NoError(t, tok.Error())
	}
	topic, _ := c.readPublish()
	require.Equal(t, "sync", topic, "the first message after e/x, which the expired session subscribed to")
}
