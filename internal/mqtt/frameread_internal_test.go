package mqtt

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/stretchr/testify/require"
)

// packetStream returns n PUBACKs and n QoS 1 PUBLISHes, alternating, as
// a broker sends them with MQTT 5.
func packetStream(t *testing.T, n int) []byte {
	var b bytes.Buffer
	for i := range n {
		id := uint16(i + 1)
		ack := packets.Puback{PacketID: id, Properties: &packets.Properties{}}
		_, err := ack.WriteTo(&b)
		require.NoError(t, err)
		pub := packets.Publish{Topic: fmt.Sprintf("sensors/s%d/raw", i%8), QoS: 1, PacketID: id,
			Payload: []byte(testPayload), Properties: &packets.Properties{}}
		_, err = pub.WriteTo(&b)
		require.NoError(t, err)
	}
	return b.Bytes()
}

// readStream reads n PUBACK and PUBLISH pairs with paho's ReadPacket
// from r, checking each, then the connection's end, and returns the
// bytes allocated a packet meanwhile.
func readStream(t *testing.T, r io.Reader, n int) uint64 {
	topics := make([]string, 8)
	for i := range topics {
		topics[i] = fmt.Sprintf("sensors/s%d/raw", i)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		id := uint16(i + 1)
		cp, err := packets.ReadPacket(r)
		if err != nil || cp.Content.(*packets.Puback).PacketID != id {
			t.Fatalf("packet %d: %v, %v", 2*i, cp, err)
		}
		cp, err = packets.ReadPacket(r)
		if err != nil {
			t.Fatalf("packet %d: %v", 2*i+1, err)
		}
		pub := cp.Content.(*packets.Publish)
		if pub.PacketID != id || pub.Topic != topics[i%8] || string(pub.Payload) != testPayload {
			t.Fatalf("packet %d: %+v", 2*i+1, pub)
		}
	}
	runtime.ReadMemStats(&after)
	_, err := packets.ReadPacket(r)
	require.ErrorIs(t, err, io.EOF, "the connection's end")
	return (after.TotalAlloc - before.TotalAlloc) / uint64(2*n)
}

// testPayload is the payload of packetStream's PUBLISHes.
const testPayload = `{"t":1764528000000000000}`

// streamConn returns a frameConn of MQTT 5 on which a broker sends
// stream, then closes the connection.
func streamConn(stream []byte) *frameConn {
	client, server := net.Pipe()
	go func() {
		_, _ = server.Write(stream)
		server.Close()
	}()
	return newFrameConn(client, true, 1<<20, &frameHooks{}, time.Second)
}

// nilAtEnd is a reader that says nil where the frameConn it reads says
// io.EOF with bytes: the end of a packet as it was before packetEnd.
type nilAtEnd struct{ f *frameConn }

func (r nilAtEnd) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	if n > 0 && err == io.EOF {
		err = nil
	}
	return n, err
}

// TestReadPacketGarbage: paho.golang reads an MQTT 5 stream of PUBACKs
// and PUBLISHes through a frameConn packet by packet, each whole and in
// order, then the connection's end; and the read that ends a packet
// saying io.EOF (packetEnd) leaves at most 0.8 of the garbage a packet
// that a nil leaves, which makes paho's buffer grow once more (2,367
// against 3,390 bytes a packet here, without the race detector).
func TestReadPacketGarbage(t *testing.T) {
	const n = 2000
	stream := packetStream(t, n)
	withEOF := readStream(t, streamConn(stream), n)
	withNil := readStream(t, nilAtEnd{streamConn(stream)}, n)
	t.Logf("%d bytes a packet, %d with nil at the ends", withEOF, withNil)
	require.Less(t, float64(withEOF), 0.8*float64(withNil))
}

// TestPacketEndOnlyForMQTT5: a frameConn says io.EOF at a packet's end
// only with MQTT 5; with MQTT 3.1.1, whose client reads with plain reads,
// a packet's last byte comes with nil.
func TestPacketEndOnlyForMQTT5(t *testing.T) {
	for _, v5 := range []bool{true, false} {
		client, server := net.Pipe()
		go func() {
			_, _ = server.Write([]byte{typePuback << 4, 2, 0, 7})
			server.Close()
		}()
		f := newFrameConn(client, v5, 1<<20, &frameHooks{}, time.Second)
		var b [8]byte
		n, err := io.ReadFull(f, b[:2])
		require.NoError(t, err)
		require.Equal(t, 2, n)
		n, err = f.Read(b[:])
		require.Equal(t, 2, n)
		if v5 {
			require.ErrorIs(t, err, io.EOF, "MQTT 5")
		} else {
			require.NoError(t, err, "MQTT 3.1.1")
		}
	}
}
