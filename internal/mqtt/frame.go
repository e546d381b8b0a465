package mqtt

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// frameConn is the client's connection to the broker, between it and the
// paho library that speaks MQTT on it. It reads the broker's packets
// through a buffer and looks at each packet's fixed header before paho
// does, because paho allocates whatever a header claims (a PUBLISH that
// claims 256 MiB costs 256 MiB):
//
//   - a PUBLISH longer than the client's limit (Config.MaxPayload and its
//     headers) is read past, never held: only its topic is kept, to count
//     it (reason too_large) on the subscriptions it was for, and the
//     client acknowledges it itself (MQTT 5 brokers are told the limit and
//     should never send one; MQTT 3.1.1 ones cannot be told);
//   - any other packet longer than the limit ends the connection;
//   - with MQTT 5, a PUBLISH that carries several subscription
//     identifiers is rewritten with them in one user property (see
//     subids.go), since paho keeps only the last.
//
// It counts the PUBLISH packets it hands to paho, and the intake counts
// those it handled, per connection (LeaveShared waits until the intake
// has handled those that came before the broker's UNSUBACK).
//
// Writes go through its writer (framewrite.go).
type frameConn struct {
	net.Conn
	writer
	r     *bufio.Reader
	v5    bool
	limit int         // the largest remaining length accepted
	hooks *frameHooks // shared by the client's connections
	hdr   [5]byte     // the current packet's fixed header
	pend  []byte      // what is left to hand out of the bytes read
	left  int         // what is left of the current packet in r, after pend
	buf   []byte      // a PUBLISH read whole (MQTT 5), reused
	out   []byte      // a rewritten PUBLISH, reused

	// publishes counts the PUBLISH packets handed to paho, but QoS 2
	// ones sent again (DUP), which paho may hand on or not; handled
	// counts those of them that the intake handed over or dropped.
	publishes, handled atomic.Uint64
}

// frameHooks are what the connections of a client tell it.
type frameHooks struct {
	// oversized is told of a PUBLISH over the limit, read past: its
	// topic and QoS.
	oversized func(topic string, qos byte)
}

// readBuffer is the size of a connection's read buffer: paho reads each
// packet in at least three reads (its type, its length, its body), a
// system call each on a bare connection.
const readBuffer = 16 << 10

// errPacketTooLarge ends a connection on which the broker sent a packet
// other than a PUBLISH over the limit.
var errPacketTooLarge = errors.New("mqtt: the broker sent a packet over the client's maximum packet size")

// MQTT packet types.
const (
	typePublish = 3
	typePuback  = 4
	typePubrec  = 5
)

func newFrameConn(c net.Conn, v5 bool, limit int, hooks *frameHooks, writeTimeout time.Duration) *frameConn {
	f := &frameConn{Conn: c, r: bufio.NewReaderSize(c, readBuffer), v5: v5, limit: limit, hooks: hooks}
	f.writer = writer{conn: c, wdl: writeTimeout, packets: v5}
	return f
}

// Write is the writer's (see writer.Write).
func (f *frameConn) Write(p []byte) (int, error) { return f.writer.Write(p) }

// Read hands out the broker's packets, as the type comment says; with
// MQTT 5, the read that hands out a packet's last byte says io.EOF with
// it (see packetEnd).
func (f *frameConn) Read(p []byte) (int, error) {
	for len(f.pend) == 0 && f.left == 0 {
		if err := f.next(); err != nil {
			return 0, err
		}
	}
	if len(f.pend) > 0 {
		n := copy(p, f.pend)
		f.pend = f.pend[n:]
		return n, f.packetEnd()
	}
	n, err := f.r.Read(p[:min(len(p), f.left)])
	f.left -= n
	if err != nil {
		return n, err
	}
	return n, f.packetEnd()
}

// packetEnd returns io.EOF, with MQTT 5, once the packet being handed out
// has been handed out whole. paho.golang reads a packet's body into a
// bytes.Buffer (packets.ReadPacket: io.CopyN through an io.LimitedReader),
// which grows by 512 bytes before every read until one says EOF: a read
// that ends the packet with nil costs another growth, 1.8 KB of garbage
// for a PUBACK (TestReadPacketGarbage: a stream of PUBACKs and PUBLISHes
// leaves 2.4 KB a packet, 3.4 without). paho reads each packet afresh, with
// io.ReadFull and io.CopyN, which take bytes that come with an EOF as
// read; the next Read hands out the next packet. paho.mqtt.golang
// (MQTT 3.1.1) reads the length's bytes with plain reads and would take an
// EOF for the connection's end.
func (f *frameConn) packetEnd() error {
	if f.v5 && len(f.pend) == 0 && f.left == 0 {
		return io.EOF
	}
	return nil
}

// next reads the next packet's fixed header and decides what to hand out.
func (f *frameConn) next() error {
	h, rl, err := f.header()
	if err != nil {
		return err
	}
	if h[0]>>4 != typePublish {
		if rl > f.limit {
			return fmt.Errorf("%w (%d bytes, type %d)", errPacketTooLarge, rl, h[0]>>4)
		}
		f.pend, f.left = h, rl
		return nil
	}
	qos, dup := h[0]>>1&3, h[0]&8 != 0
	if rl > f.limit {
		return f.skip(h[0], rl)
	}
	if !(qos == 2 && dup) {
		f.publishes.Add(1)
	}
	if !f.v5 {
		f.pend, f.left = h, rl
		return nil
	}
	return f.whole(h, rl)
}

// header reads a fixed header: the type byte and the remaining length,
// at most four bytes.
func (f *frameConn) header() ([]byte, int, error) {
	b, err := f.r.ReadByte()
	if err != nil {
		return nil, 0, err
	}
	f.hdr[0] = b
	n, mult := 0, 1
	for i := 1; ; i++ {
		if i == len(f.hdr) {
			return nil, 0, errors.New("mqtt: malformed remaining length from the broker")
		}
		b, err := f.r.ReadByte()
		if err != nil {
			return nil, 0, err
		}
		f.hdr[i] = b
		n += int(b&0x7f) * mult
		mult <<= 7
		if b < 0x80 {
			return f.hdr[:i+1], n, nil
		}
	}
}

// whole reads a PUBLISH of remaining length rl, whose fixed header is h,
// and hands it out whole, rewritten if it carries several subscription
// identifiers.
func (f *frameConn) whole(h []byte, rl int) error {
	f.buf = append(f.buf[:0], h...)
	start := len(f.buf)
	f.buf = grow(f.buf, rl)
	if _, err := io.ReadFull(f.r, f.buf[start:]); err != nil {
		return err
	}
	f.pend = f.buf
	if out, ok := foldSubIDs(f.buf, start, f.out[:0]); ok {
		f.out, f.pend = out, out
	}
	if cap(f.buf) > 4*readBuffer {
		f.buf = nil // a large one is not kept
	}
	return nil
}

// grow returns b extended by n bytes.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

// skip reads past a PUBLISH over the limit, whose first header byte is t
// and remaining length rl, keeping its topic only; it tells the hooks and
// acknowledges a QoS 1 or 2 one.
func (f *frameConn) skip(t byte, rl int) error {
	var two [2]byte
	if _, err := io.ReadFull(f.r, two[:]); err != nil {
		return err
	}
	n := int(two[0])<<8 | int(two[1])
	topic := make([]byte, min(n, rl-2))
	if _, err := io.ReadFull(f.r, topic); err != nil {
		return err
	}
	read := 2 + len(topic)
	qos := t >> 1 & 3
	var id [2]byte
	if qos > 0 && rl-read >= 2 {
		if _, err := io.ReadFull(f.r, id[:]); err != nil {
			return err
		}
		read += 2
	}
	if _, err := f.r.Discard(rl - read); err != nil {
		return err
	}
	f.hooks.oversized(string(topic), qos)
	switch qos {
	case 1:
		return f.send([]byte{typePuback << 4, 2, id[0], id[1]})
	case 2:
		// The broker's PUBREL is then answered by paho, which completes
		// any PUBREL.
		return f.send([]byte{typePubrec << 4, 2, id[0], id[1]})
	}
	return nil
}
