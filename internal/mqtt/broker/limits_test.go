package broker_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
)

// memory returns the live heap and goroutine stacks, after a garbage
// collection, and the bytes allocated since the process started.
func memory() (live, allocated int64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc + m.StackInuse), int64(m.TotalAlloc)
}

// requireClosed requires the broker to close c within 10 seconds, with c
// unread or reset.
func requireClosed(t *testing.T, c net.Conn) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err := c.Read(make([]byte, 64))
	require.Error(t, err)
	require.False(t, errors.Is(err, os.ErrDeadlineExceeded), "still open after 10 s")
}

func dial(t *testing.T, b *broker.Broker) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", b.Addr(), 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// A connection that has not sent its CONNECT costs a few KiB (a
// goroutine and a small buffer), not a client with its queues.
func TestIdleConnectionsCheap(t *testing.T) {
	const n = 1000
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet, MaxConnections: n})
	require.NoError(t, err)
	defer b.Close()
	before, _ := memory()
	for range n {
		dial(t, b)
	}
	require.Eventually(t, func() bool { return b.Stats().Connections == n }, 10*time.Second, time.Millisecond)
	after, _ := memory()
	each := (after - before) / n
	t.Logf("%d idle connections: %d bytes each, both ends", n, each)
	require.Less(t, each, int64(8<<10))
}

// A connection whose CONNECT has not arrived, whole, when the connect
// deadline passes is closed and counted; one whose CONNECT arrived is
// served past it.
func TestConnectDeadline(t *testing.T) {
	const deadline = 200 * time.Millisecond
	broker.SetConnectTimeout(t, deadline)
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	defer b.Close()
	start := time.Now()
	silent, partial := dial(t, b), dial(t, b)
	_, err = partial.Write([]byte{0x10, 20, 0, 4, 'M'})
	require.NoError(t, err)
	served := dialRaw(t, b.Addr(), 4, packets.Packet{Connect: packets.ConnectParams{ClientIdentifier: "c", Keepalive: 60, Clean: true}})

	requireClosed(t, silent)
	requireClosed(t, partial)
	require.GreaterOrEqual(t, time.Since(start), deadline)
	require.Equal(t, uint64(2), b.Stats().ConnectTimeouts)
	time.Sleep(time.Until(start.Add(2 * deadline)))
	served.subscribe("a/#")
}

// Before a client has authenticated, it may send no more than 64 KiB:
// CONNECT packets that claim or send more close their connections before
// the broker allocates for them. 20 that claim 15 MiB each (within
// MaxPacketSize) would make mochi alone allocate 300 MiB.
func TestLargeConnectRefused(t *testing.T) {
	const n = 20
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	defer b.Close()
	header := []byte{0x10, 0x80, 0x80, 0xc0, 0x07} // a CONNECT of 15 MiB
	body := make([]byte, 15<<20)
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = dial(t, b)
	}
	live, allocated := memory()
	wrote := make(chan error, n)
	for _, c := range conns {
		go func() {
			_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
			_, err := c.Write(header)
			if err == nil {
				_, err = c.Write(body)
			}
			wrote <- err
		}()
	}
	for _, c := range conns {
		requireClosed(t, c)
	}
	for range n {
		// The broker closed the connection: the rest of the CONNECT
		// cannot be sent.
		require.Error(t, <-wrote)
	}
	require.Equal(t, uint64(n), b.Stats().ConnectsTooLarge)
	live2, allocated2 := memory()
	t.Logf("%d CONNECTs of 15 MiB: %d KiB allocated, live memory %+d KiB", n, (allocated2-allocated)>>10, (live2-live)>>10)
	require.Less(t, allocated2-allocated, int64(4<<20))
	require.Less(t, live2-live, int64(4<<20))
	runtime.KeepAlive(body) // live in both measures
}

// A CONNECT of up to 64 KiB, header included, is served; a larger one is
// not.
func TestConnectSizeLimit(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	defer b.Close()
	// A CONNECT of size bytes, its will's payload filling it up.
	connect := func(size int) (packets.Packet, []byte) {
		pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Connect}, ProtocolVersion: 4,
			Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), ClientIdentifier: "big", Keepalive: 60, Clean: true,
				WillFlag: true, WillTopic: "w"}}
		for {
			var buf bytes.Buffer
			require.NoError(t, pk.ConnectEncode(&buf))
			if buf.Len() == size {
				return pk, buf.Bytes()
			}
			pk.Connect.WillPayload = []byte(strings.Repeat("x", len(pk.Connect.WillPayload)+size-buf.Len()))
		}
	}
	pk, _ := connect(64 << 10)
	dialRaw(t, b.Addr(), 4, pk)
	require.Zero(t, b.Stats().ConnectsTooLarge)

	c := dial(t, b)
	_, large := connect(64<<10 + 1)
	_, err = c.Write(large)
	require.NoError(t, err)
	requireClosed(t, c)
	require.Equal(t, uint64(1), b.Stats().ConnectsTooLarge)
}

// The broker keeps MaxConnections open, those that have not sent CONNECT
// included, and closes others at once.
func TestMaxConnections(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet, MaxConnections: 3})
	require.NoError(t, err)
	defer b.Close()
	for _, id := range []string{"a", "b"} {
		_, err := pahoClient(t, b, id, "", "")
		require.NoError(t, err)
	}
	idle := dial(t, b)
	require.Eventually(t, func() bool { return b.Stats().Connections == 3 }, 10*time.Second, time.Millisecond)

	requireClosed(t, dial(t, b))
	require.Equal(t, uint64(1), b.Stats().ConnectionsRefused)

	require.NoError(t, idle.Close())
	require.Eventually(t, func() bool { return b.Stats().Connections == 2 }, 10*time.Second, time.Millisecond)
	_, err = pahoClient(t, b, "c", "", "")
	require.NoError(t, err)
}

// A packet whose header claims more than MaxPacketSize closes its
// connection before the broker allocates for it, and is counted.
func TestPacketClaimBeyondMaxPacketSize(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet, MaxPacketSize: 1 << 20})
	require.NoError(t, err)
	defer b.Close()
	c := dialRaw(t, b.Addr(), 4, packets.Packet{Connect: packets.ConnectParams{ClientIdentifier: "c", Keepalive: 60, Clean: true}})
	_, allocated := memory()
	_, err = c.conn.Write([]byte{0x30, 0xff, 0xff, 0xff, 0x7f}) // a PUBLISH of 256 MiB
	require.NoError(t, err)
	requireClosed(t, c.conn)
	require.Eventually(t, func() bool { return b.Stats().PacketsTooLarge == 1 }, 10*time.Second, time.Millisecond)
	_, allocated2 := memory()
	require.Less(t, allocated2-allocated, int64(4<<20))
}
