package broker

import (
	"encoding/binary"
	"io"
	"net"
	"sync"

	"github.com/mochi-mqtt/server/v2/packets"
)

// flow is the broker's side of MQTT 5 flow control on one connection
// (3.3.4, MQTT-3.3.4-9): at most the client's Receive Maximum QoS 1 and 2
// PUBLISH packets unacknowledged. mochi's own (v2.7.9) reorders and
// loses messages and can deadlock (see mqtt5Hook), so it is off, and the
// flow sits between mochi and the connection instead: it reads the
// packets mochi writes, sends a QoS 1 or 2 PUBLISH at once while fewer
// than the maximum are in flight and holds it otherwise, in order, and
// reads the client's acknowledgements as mochi reads them, sending the
// held PUBLISH packets as slots free. mochi keeps every message in the
// session until it is acknowledged, so a held one that the connection's
// end leaves unsent is sent again on the next connection, as an
// unacknowledged one is. Other packets pass at once: a QoS 0 PUBLISH may
// overtake the held ones, as MQTT allows (ordering is per QoS).
//
// The held messages are bounded by MaxQueued, mochi's bound on the
// messages a client has in flight.
type flow struct {
	max int // the client's Receive Maximum

	mu       sync.Mutex
	w        io.Writer // the connection, written under mu only
	partial  []byte    // the start of a packet that mochi is still writing
	held     [][]byte  // QoS 1 and 2 PUBLISH packets, whole, waiting for a slot
	inflight map[uint16]struct{}
	err      error // the connection's first write error

	in ackScanner // the client's packets, as mochi reads them
}

func newFlow(max int, w io.Writer) *flow {
	return &flow{max: max, w: w, inflight: make(map[uint16]struct{}, max)}
}

// receiveMaximum returns the Receive Maximum that connect, a whole
// CONNECT packet, states: 0 for MQTT 3.1.1, or when connect cannot be
// read (mochi then refuses it).
func receiveMaximum(connect []byte) int {
	size, err := packetSize(connect)
	if err != nil || size == 0 || size > len(connect) {
		return 0
	}
	var pk packets.Packet
	if pk.FixedHeader.Decode(connect[0]) != nil {
		return 0
	}
	pk.FixedHeader.Remaining = size - headerLen(connect)
	if pk.ConnectDecode(connect[headerLen(connect):size]) != nil || pk.ProtocolVersion != 5 {
		return 0
	}
	if n := int(pk.Properties.ReceiveMaximum); n > 0 {
		return n
	}
	return 65535 // MQTT 5's default
}

// write takes bytes that mochi writes: whole packets pass or are held;
// the start of one waits for its end.
func (f *flow) write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return 0, f.err
	}
	data := p
	if len(f.partial) > 0 {
		f.partial = append(f.partial, p...)
		data = f.partial
	}
	start, i := 0, 0
	for i < len(data) {
		size, err := packetSize(data[i:])
		if err != nil {
			f.err = err
			return 0, err
		}
		if size == 0 || i+size > len(data) {
			break
		}
		pkt := data[i : i+size]
		if id, ok := publishID(pkt); ok {
			if len(f.held) > 0 || len(f.inflight) >= f.max {
				f.send(data[start:i])
				f.held = append(f.held, append([]byte(nil), pkt...))
				start = i + size
			} else {
				f.inflight[id] = struct{}{}
			}
		}
		i += size
	}
	f.send(data[start:i])
	rest := data[i:]
	if len(f.partial) > 0 {
		f.partial = append(f.partial[:0], rest...)
	} else {
		f.partial = append([]byte(nil), rest...)
	}
	if len(f.partial) == 0 {
		f.partial = nil
	}
	if f.err != nil {
		return 0, f.err
	}
	return len(p), nil
}

// send writes b to the connection, unless a write failed before; f.mu
// is held.
func (f *flow) send(b []byte) {
	if len(b) == 0 || f.err != nil {
		return
	}
	_, f.err = f.w.Write(b)
}

// acked frees the slot of the PUBLISH id and sends the held packets that
// fit.
func (f *flow) acked(id uint16) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.inflight[id]; !ok {
		return
	}
	delete(f.inflight, id)
	var out net.Buffers
	for len(f.held) > 0 && len(f.inflight) < f.max {
		pkt := f.held[0]
		f.held[0] = nil
		f.held = f.held[1:]
		id, _ := publishID(pkt)
		f.inflight[id] = struct{}{}
		out = append(out, pkt)
	}
	if len(out) > 0 && f.err == nil {
		_, f.err = out.WriteTo(f.w)
	}
}

// read scans p, bytes that mochi read from the client, for
// acknowledgements.
func (f *flow) read(p []byte) { f.in.scan(p, f.acked) }

// publishID returns the packet identifier of pkt, a whole packet, when it
// is a QoS 1 or 2 PUBLISH.
func publishID(pkt []byte) (uint16, bool) {
	if pkt[0]>>4 != packets.Publish || pkt[0]>>1&3 == 0 {
		return 0, false
	}
	h := headerLen(pkt)
	if h+2 > len(pkt) {
		return 0, false
	}
	at := h + 2 + int(binary.BigEndian.Uint16(pkt[h:]))
	if at+2 > len(pkt) {
		return 0, false
	}
	return binary.BigEndian.Uint16(pkt[at:]), true
}

// headerLen returns the length of the fixed header at the start of pkt,
// whose remaining length is valid.
func headerLen(pkt []byte) int {
	i := 1
	for i < len(pkt) && pkt[i]&128 != 0 {
		i++
	}
	return i + 1
}

// ackScanner follows the packets of a byte stream, as it arrives in
// pieces, and reports the PUBLISH packets that the client's
// acknowledgements end: PUBACK, PUBCOMP, and PUBREC with a failure
// reason (with success, PUBCOMP ends the exchange).
type ackScanner struct {
	head   [8]byte // the current packet's fixed header and first bytes
	n      int     // bytes of head filled
	skip   int     // bytes of the current packet past head, still to come
	broken bool    // a malformed length: mochi ends the connection
}

func (s *ackScanner) scan(p []byte, acked func(id uint16)) {
	for len(p) > 0 && !s.broken {
		if s.skip > 0 {
			k := min(s.skip, len(p))
			s.skip -= k
			p = p[k:]
			continue
		}
		s.head[s.n] = p[0]
		s.n++
		p = p[1:]
		size, err := packetSize(s.head[:s.n])
		if err != nil {
			s.broken = true
			return
		}
		if size == 0 {
			continue
		}
		h := headerLen(s.head[:s.n])
		if want := min(size, h+3); s.n < want {
			continue
		}
		s.ack(h, size, acked)
		s.skip, s.n = size-s.n, 0
	}
}

// ack reports the acknowledgement in head, a packet of size bytes whose
// fixed header is h bytes, if it is one.
func (s *ackScanner) ack(h, size int, acked func(id uint16)) {
	body := s.head[h:s.n]
	if len(body) < 2 {
		return
	}
	id := binary.BigEndian.Uint16(body)
	switch s.head[0] >> 4 {
	case packets.Puback, packets.Pubcomp:
		acked(id)
	case packets.Pubrec:
		if size-h >= 3 && body[2] >= 0x80 {
			acked(id)
		}
	}
}
