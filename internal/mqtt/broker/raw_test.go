package broker_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"
)

// rawClient speaks MQTT over a bare TCP connection, packet by packet:
// what paho (MQTT 3.1.1 only) cannot do, such as MQTT 5 session expiry,
// or not reading at all.
type rawClient struct {
	t       *testing.T
	conn    net.Conn
	r       *bufio.Reader
	version byte
	present bool // the CONNACK's session present flag
}

// dialRaw connects to addr, sends connect (its type, protocol name and
// version filled in) and requires a successful CONNACK.
func dialRaw(t *testing.T, addr string, version byte, connect packets.Packet) *rawClient {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	c := &rawClient{t: t, conn: conn, r: bufio.NewReader(conn), version: version}
	connect.FixedHeader.Type = packets.Connect
	connect.Connect.ProtocolName = []byte("MQTT")
	c.send(connect)
	fh, body := c.read()
	require.Equal(t, packets.Connack, fh.Type)
	ack := packets.Packet{FixedHeader: fh, ProtocolVersion: version}
	require.NoError(t, ack.ConnackDecode(body))
	require.Equal(t, packets.CodeSuccess.Code, ack.ReasonCode, "CONNACK")
	c.present = ack.SessionPresent
	return c
}

// send encodes pk with the client's protocol version and writes it.
func (c *rawClient) send(pk packets.Packet) {
	c.t.Helper()
	pk.ProtocolVersion = c.version
	var buf bytes.Buffer
	var err error
	switch pk.FixedHeader.Type {
	case packets.Connect:
		err = pk.ConnectEncode(&buf)
	case packets.Subscribe:
		err = pk.SubscribeEncode(&buf)
	case packets.Publish:
		err = pk.PublishEncode(&buf)
	case packets.Disconnect:
		err = pk.DisconnectEncode(&buf)
	default:
		err = fmt.Errorf("rawClient: cannot send %v", pk.FixedHeader.Type)
	}
	require.NoError(c.t, err)
	require.NoError(c.t, c.conn.SetWriteDeadline(time.Now().Add(10*time.Second)))
	_, err = c.conn.Write(buf.Bytes())
	require.NoError(c.t, err)
}

// read returns the next packet's fixed header and body, waiting up to 10
// seconds.
func (c *rawClient) read() (packets.FixedHeader, []byte) {
	c.t.Helper()
	require.NoError(c.t, c.conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	var fh packets.FixedHeader
	b, err := c.r.ReadByte()
	require.NoError(c.t, err)
	require.NoError(c.t, fh.Decode(b))
	mult := 1
	for {
		d, err := c.r.ReadByte()
		require.NoError(c.t, err)
		fh.Remaining += int(d&127) * mult
		if d&128 == 0 {
			break
		}
		mult *= 128
	}
	body := make([]byte, fh.Remaining)
	_, err = io.ReadFull(c.r, body)
	require.NoError(c.t, err)
	return fh, body
}

// subscribe subscribes to filter at QoS 1 and requires it granted.
func (c *rawClient) subscribe(filter string) {
	c.t.Helper()
	c.send(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1}, PacketID: 1,
		Filters: packets.Subscriptions{{Filter: filter, Qos: 1}}})
	fh, body := c.read()
	require.Equal(c.t, packets.Suback, fh.Type)
	ack := packets.Packet{FixedHeader: fh, ProtocolVersion: c.version}
	require.NoError(c.t, ack.SubackDecode(body))
	require.Equal(c.t, []byte{1}, ack.ReasonCodes, "SUBACK")
}

// readPublish reads the next packet, requires a PUBLISH, acknowledges it
// at QoS 1 and returns its topic and payload.
func (c *rawClient) readPublish() (string, string) {
	c.t.Helper()
	fh, body := c.read()
	require.Equal(c.t, packets.Publish, fh.Type)
	pk := packets.Packet{FixedHeader: fh, ProtocolVersion: c.version}
	require.NoError(c.t, pk.PublishDecode(body))
	if fh.Qos == 1 {
		var buf bytes.Buffer
		ack := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Puback}, PacketID: pk.PacketID, ProtocolVersion: c.version}
		require.NoError(c.t, ack.PubackEncode(&buf))
		_, err := c.conn.Write(buf.Bytes())
		require.NoError(c.t, err)
	}
	return pk.TopicName, string(pk.Payload)
}
