package broker

import (
	"sync"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// packetIDHook works around mochi (v2.7.9) mixing up the two packet
// identifier spaces of a connection. MQTT numbers the client's
// SUBSCRIBE, UNSUBSCRIBE and QoS 1 and 2 PUBLISH packets apart from the
// broker's QoS 1 and 2 PUBLISH packets; mochi keeps both in one in-flight
// table and answers a SUBSCRIBE (or UNSUBSCRIBE) whose identifier equals
// that of a message the broker sent and the client has not acknowledged
// yet with reason 0x91, "packet identifier in use", without subscribing
// (or unsubscribing), nor sending the retained messages. An MQTT 3.1.1
// client cannot even tell: 0x91 is not a 3.1.1 return code, and paho
// reports it as a granted subscription. It happens whenever a client
// subscribes to a second filter right after a first one whose retained
// QoS 1 messages it is still acknowledging: paho numbers both from 1, as
// mochi does.
//
// The hook gives such a SUBSCRIBE or UNSUBSCRIBE, as it is read, an
// identifier that the table does not hold, and the SUBACK or UNSUBACK
// the client's identifier back as it is written. mochi reads and answers
// a client's SUBSCRIBE and UNSUBSCRIBE packets one at a time, in the
// connection's goroutine, and writes the answer before reading the next
// packet, so one identifier per client is remembered.
//
// TestSubscribePacketIDOfUnackedMessage shows mochi's behaviour.
type packetIDHook struct {
	mochi.HookBase

	mu      sync.Mutex
	swapped map[*mochi.Client]swap
}

// swap is a SUBSCRIBE's or UNSUBSCRIBE's identifier, from, that the
// broker handles as to.
type swap struct {
	kind     byte // packets.Suback or packets.Unsuback: the answer
	from, to uint16
}

func newPacketIDHook() *packetIDHook {
	return &packetIDHook{swapped: make(map[*mochi.Client]swap)}
}

func (h *packetIDHook) ID() string { return "robotexec-packet-id" }

func (h *packetIDHook) Provides(b byte) bool {
	return b == mochi.OnPacketRead || b == mochi.OnPacketEncode || b == mochi.OnDisconnect
}

// OnPacketRead runs in the connection's goroutine as a packet arrives,
// before mochi validates and handles it.
func (h *packetIDHook) OnPacketRead(cl *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	var answer byte
	switch pk.FixedHeader.Type {
	case packets.Subscribe:
		answer = packets.Suback
	case packets.Unsubscribe:
		answer = packets.Unsuback
	default:
		return pk, nil
	}
	if pk.PacketID == 0 || !brokerInflight(cl, pk.PacketID) {
		return pk, nil
	}
	to, ok := freePacketID(cl, pk.PacketID)
	if !ok {
		return pk, nil // mochi answers 0x91, as without the hook
	}
	h.mu.Lock()
	h.swapped[cl] = swap{kind: answer, from: pk.PacketID, to: to}
	h.mu.Unlock()
	pk.PacketID = to
	return pk, nil
}

// OnPacketEncode runs as any packet is written to cl, in any goroutine;
// the SUBACK and UNSUBACK are written in the connection's.
func (h *packetIDHook) OnPacketEncode(cl *mochi.Client, pk packets.Packet) packets.Packet {
	t := pk.FixedHeader.Type
	if t != packets.Suback && t != packets.Unsuback {
		return pk
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.swapped[cl]
	if ok && s.kind == t && s.to == pk.PacketID {
		pk.PacketID = s.from
		delete(h.swapped, cl)
	}
	return pk
}

// OnDisconnect forgets the identifier of a packet that got no answer.
func (h *packetIDHook) OnDisconnect(cl *mochi.Client, _ error, _ bool) {
	h.mu.Lock()
	delete(h.swapped, cl)
	h.mu.Unlock()
}

// brokerInflight reports whether id is that of a message the broker sent
// cl and cl has not acknowledged (or completed, at QoS 2). An identifier
// of the client's own QoS 2 publication that awaits its PUBREL is the
// client's to avoid.
func brokerInflight(cl *mochi.Client, id uint16) bool {
	pk, ok := cl.State.Inflight.Get(id)
	return ok && pk.FixedHeader.Type != packets.Pubrec
}

// freePacketID returns an identifier that cl's in-flight table does not
// hold, counting down from id: mochi numbers the broker's messages
// upwards from its last one, which an identifier in use is at or behind,
// so the one returned is the last it would take again.
func freePacketID(cl *mochi.Client, id uint16) (uint16, bool) {
	for range cl.State.Inflight.Len() + 1 {
		id--
		if id == 0 {
			id = 65535
		}
		if _, used := cl.State.Inflight.Get(id); !used {
			return id, true
		}
	}
	return 0, false
}
