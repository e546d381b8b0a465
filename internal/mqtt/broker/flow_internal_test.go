package broker

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"
)

// encode returns pk's bytes as an MQTT 5 client or broker sends them.
func encode(t *testing.T, pk packets.Packet) []byte {
	t.Helper()
	pk.ProtocolVersion = 5
	var b bytes.Buffer
	var err error
	switch pk.FixedHeader.Type {
	case packets.Publish:
		err = pk.PublishEncode(&b)
	case packets.Puback:
		err = pk.PubackEncode(&b)
	case packets.Pubrec:
		err = pk.PubrecEncode(&b)
	case packets.Pubcomp:
		err = pk.PubcompEncode(&b)
	case packets.Pingreq:
		err = pk.PingreqEncode(&b)
	case packets.Connect:
		pk.Connect.ProtocolName = []byte("MQTT")
		err = pk.ConnectEncode(&b)
	}
	require.NoError(t, err)
	return b.Bytes()
}

// chunks cuts b into pieces of random sizes, 1 byte or more.
func chunks(rng *rand.Rand, b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := 1 + rng.IntN(min(len(b), 40))
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// The flow writes at most max QoS 1 PUBLISH packets unacknowledged, in
// order, whatever pieces mochi writes them in; QoS 0 ones pass; each
// acknowledgement lets the next held one go.
func TestFlowHoldsPastReceiveMaximum(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var stream []byte
		for i := 1; i <= 10; i++ {
			pk := publish(uint16(i), "t", string(rune('a'+i)))
			if i%3 == 0 {
				pk.FixedHeader.Qos, pk.PacketID = 0, 0
			}
			stream = append(stream, encode(t, pk)...)
		}
		var out bytes.Buffer
		f := newFlow(3, &out)
		for _, c := range chunks(rng, stream) {
			n, err := f.write(c)
			require.NoError(t, err)
			require.Equal(t, len(c), n)
		}
		// QoS 1: 1 2 4 5 7 8 10; QoS 0: 3 6 9.
		require.Equal(t, []string{"1b", "2c", "0d", "4e", "0g", "0j"}, publishes(t, out.Bytes()), "seed %d", seed)
		out.Reset()
		f.acked(2)
		f.acked(2) // again: nothing more
		f.acked(99)
		require.Equal(t, []string{"5f"}, publishes(t, out.Bytes()))
		out.Reset()
		for _, id := range []uint16{1, 4, 5, 7} {
			f.acked(id)
		}
		require.Equal(t, []string{"7h", "8i", "10k"}, publishes(t, out.Bytes()))
		require.Empty(t, f.held)
		require.Nil(t, f.partial)
	}
}

// publishes returns "ID PAYLOAD" of each PUBLISH in b (ID 0 for QoS 0).
func publishes(t *testing.T, b []byte) []string {
	t.Helper()
	var out []string
	for len(b) > 0 {
		size, err := packetSize(b)
		require.NoError(t, err)
		require.Positive(t, size)
		pk := packets.Packet{ProtocolVersion: 5}
		require.NoError(t, pk.FixedHeader.Decode(b[0]))
		pk.FixedHeader.Remaining = size - headerLen(b)
		require.NoError(t, pk.PublishDecode(b[headerLen(b):size]))
		out = append(out, fmt.Sprint(pk.PacketID)+string(pk.Payload))
		b = b[size:]
	}
	return out
}

// The scanner finds the acknowledgements that end an exchange in a
// client's stream, whatever pieces it arrives in.
func TestAckScanner(t *testing.T) {
	ack := func(typ byte, id uint16, reason byte) []byte {
		return encode(t, packets.Packet{FixedHeader: packets.FixedHeader{Type: typ}, PacketID: id, ReasonCode: reason})
	}
	var stream []byte
	stream = append(stream, encode(t, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Connect},
		Connect: packets.ConnectParams{ClientIdentifier: "c", Clean: true}})...)
	stream = append(stream, ack(packets.Puback, 1, 0)...)
	stream = append(stream, ack(packets.Puback, 2, 0x10)...) // no matching subscribers: still an end
	stream = append(stream, ack(packets.Pubrec, 3, 0)...)    // QoS 2 goes on
	stream = append(stream, ack(packets.Pubcomp, 3, 0)...)
	stream = append(stream, ack(packets.Pubrec, 4, 0x80)...) // refused: ends it
	stream = append(stream, encode(t, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Pingreq}})...)
	stream = append(stream, encode(t, publish(7, "big", string(make([]byte, 300))))...)
	stream = append(stream, ack(packets.Puback, 5, 0)...)
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 2))
		var s ackScanner
		var got []uint16
		for _, c := range chunks(rng, stream) {
			s.scan(c, func(id uint16) { got = append(got, id) })
		}
		require.Equal(t, []uint16{1, 2, 3, 4, 5}, got, "seed %d", seed)
	}
}

// A CONNECT's Receive Maximum: stated, MQTT 5's default, none for 3.1.1.
func TestReceiveMaximum(t *testing.T) {
	connect := func(version byte, max uint16) []byte {
		pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Connect}, ProtocolVersion: version,
			Connect: packets.ConnectParams{ClientIdentifier: "c", Clean: true, ProtocolName: []byte("MQTT")}}
		pk.Properties.ReceiveMaximum = max
		var b bytes.Buffer
		require.NoError(t, pk.ConnectEncode(&b))
		return b.Bytes()
	}
	require.Equal(t, 16, receiveMaximum(connect(5, 16)))
	require.Equal(t, 65535, receiveMaximum(connect(5, 0)))
	require.Equal(t, 0, receiveMaximum(connect(4, 16)))
	require.Equal(t, 0, receiveMaximum([]byte{0x10, 0x05, 0, 4}))
}
