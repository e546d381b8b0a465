package broker_test

import (
	"fmt"
	"testing"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
)

// TestCleanSessionReconnect: a client whose session ends with its
// connection (a clean session: MQTT 3.1.1's clean session, MQTT 5's
// Session Expiry 0) reconnects at once, its old connection closed just
// before or still open (taken over), and subscribes again: every time, it
// gets what is published next. The old connection's end must not remove
// the new connection's subscription, nor the new client.
func TestCleanSessionReconnect(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	defer b.Close()
	pub := dialRaw(t, b.Addr(), 4, packets.Packet{Connect: packets.ConnectParams{ClientIdentifier: "pub", Keepalive: 60, Clean: true}})
	for _, version := range []byte{4, 5} {
		connect := packets.Packet{Connect: packets.ConnectParams{ClientIdentifier: fmt.Sprint("robot-", version), Keepalive: 60, Clean: true}}
		c := dialRaw(t, b.Addr(), version, connect)
		c.subscribe("clean/#")
		for i := range 100 {
			closeFirst := i%2 == 0
			if closeFirst {
				_ = c.conn.Close()
			}
			next := dialRaw(t, b.Addr(), version, connect)
			require.False(t, next.present, "a clean session is never present")
			if !closeFirst {
				_ = c.conn.Close()
			}
			next.subscribe("clean/#")
			payload := fmt.Sprintf("v%d-%d", version, i)
			pub.send(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 0}, TopicName: "clean/x", Payload: []byte(payload)})
			topic, got := next.readPublish()
			require.Equal(t, "clean/x "+payload, topic+" "+got, "reconnection %d (MQTT version %d)", i, version)
			c = next
		}
	}
}
