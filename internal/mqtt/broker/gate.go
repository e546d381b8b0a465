package broker

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
)

const (
	// maxFirstPacket is the largest packet, header included, that a
	// connection may send before it has authenticated: its CONNECT.
	maxFirstPacket = 64 << 10
	// firstBuffer is the size of a gate's buffer until a first packet
	// that needs more arrives: most CONNECT packets fit.
	firstBuffer = 256
)

// connectTimeout bounds the time between accepting a connection and the
// end of its CONNECT packet (after the TLS handshake, with TLS); mochi
// sets no deadline of its own there. It is a variable for the tests.
var connectTimeout = 10 * time.Second

var (
	errFirstTooLarge   = errors.New("first packet too large")
	errFirstNotConnect = errors.New("first packet is not CONNECT")
	errMalformedLength = errors.New("malformed remaining length")
)

// gate reads the first packet of tc (through TLS, when configured),
// within the connect deadline, into buf, and hands the connection to mochi
// with that packet to read again; it closes the connection instead when
// the packet is not a CONNECT, is larger than the limit, or does not
// arrive in time. mochi allocates a client (whose queue of packets to write
// alone takes MaxQueued pointers) and a buffer the size that a packet's
// header claims as soon as it reads that header; the gate's buffer grows
// only as the packet's bytes arrive.
func (l *listener) gate(tc *trackedConn, buf []byte) {
	defer l.wg.Done()
	_ = tc.SetReadDeadline(time.Now().Add(l.deadline))
	var c net.Conn = tc
	if l.tls != nil {
		c = tls.Server(tc, l.tls)
	}
	first, err := readFirst(c, buf, l.maxFirst)
	if err != nil {
		switch {
		case errors.Is(err, errFirstTooLarge):
			l.counts.connectsTooLarge.Add(1)
		case errors.Is(err, os.ErrDeadlineExceeded):
			l.counts.connectTimeouts.Add(1)
		}
		l.log.Debug("connection closed before CONNECT", "remote", tc.RemoteAddr().String(), "error", err)
		_ = c.Close()
		return
	}
	rc := &replayConn{Conn: c, tc: tc, pending: first}
	if n := receiveMaximum(first); n > 0 && n < l.maxQueued {
		rc.flow = newFlow(n, c)
	}
	select {
	case <-l.quit:
	case l.ready <- rc:
		tc.handed.Store(true)
		return
	}
	_ = c.Close()
}

// readFirst reads from r into buf until buf holds a whole packet, and
// returns buf, which may hold bytes after it. The packet must be a
// CONNECT of at most limit bytes.
func readFirst(r io.Reader, buf []byte, limit int) ([]byte, error) {
	size := 0
	for {
		if len(buf) > 0 && buf[0]>>4 != packets.Connect {
			return nil, errFirstNotConnect
		}
		if size == 0 {
			n, err := packetSize(buf)
			if err != nil {
				return nil, err
			}
			if n > limit {
				return nil, errFirstTooLarge
			}
			size = n
		}
		if size > 0 && len(buf) >= size {
			return buf, nil
		}
		if len(buf) == cap(buf) {
			// Double, but never beyond the packet: memory follows the
			// bytes that arrived, not those the header claims.
			more := max(cap(buf), firstBuffer)
			if size > 0 {
				more = min(more, size-len(buf))
			}
			grown := make([]byte, len(buf), len(buf)+more)
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return nil, err
		}
	}
}

// packetSize returns the size, header included, of the packet at the
// start of buf, or 0 while buf does not hold its whole fixed header.
func packetSize(buf []byte) (int, error) {
	remaining, shift := 0, 0
	for i := 1; i < len(buf); i++ {
		if i > 4 {
			return 0, errMalformedLength
		}
		remaining |= int(buf[i]&127) << shift
		if buf[i]&128 == 0 {
			return 1 + i + remaining, nil
		}
		shift += 7
	}
	return 0, nil
}

// replayConn is a connection that passed its gate: its reads return the
// bytes the gate read, then the connection's own. With an MQTT 5 client
// whose Receive Maximum is below the broker's MaxQueued, its writes and
// reads go through its flow.
type replayConn struct {
	net.Conn // *tls.Conn over tc, or tc
	tc       *trackedConn
	once     sync.Once
	pending  []byte
	flow     *flow
}

// Write is called by mochi, one packet or more, or a part of one, at a
// time.
func (c *replayConn) Write(p []byte) (int, error) {
	if c.flow != nil {
		return c.flow.write(p)
	}
	return c.Conn.Write(p)
}

// Read is called by mochi's goroutine for the connection only.
func (c *replayConn) Read(p []byte) (int, error) {
	c.once.Do(func() { close(c.tc.reading) })
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		if len(c.pending) == 0 {
			c.pending = nil
		}
		if c.flow != nil {
			c.flow.read(p[:n])
		}
		return n, nil
	}
	n, err := c.Conn.Read(p)
	if c.flow != nil {
		c.flow.read(p[:n])
	}
	return n, err
}
