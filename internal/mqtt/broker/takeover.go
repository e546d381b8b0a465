package broker

import (
	"bytes"
	"log/slog"
	"sync"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// takeoverHook closes a gap in mochi's resumption of a persistent session
// (v2.7.9, inheritClientSession): when a client reconnects, mochi copies
// the old session's in-flight messages to the new client, then clears the
// old one, and only then makes the new client the one that publications
// go to. A QoS 1 or 2 message published in between is stored in the old
// session after the copy and cleared: lost, although the session is
// persistent. The hook records the messages stored for the old client
// while its session is taken over and hands those the copy missed to the
// new client once it is established, and any that still trickle in after.
//
// The test TestConnectionCutMidStream of package mqtt loses about one
// message in two runs without this hook.
type takeoverHook struct {
	mochi.HookBase
	srv *mochi.Server
	log *slog.Logger

	mu  sync.Mutex
	old map[*mochi.Client]*orphans
}

// orphans are the messages stored for a client whose session is being
// taken over.
type orphans struct {
	next *mochi.Client // the client that took over, once established
	pks  []packets.Packet
}

// takeoverWindow is how long the hook watches an old client after a
// takeover began; the window it covers lasts microseconds.
const takeoverWindow = 30 * time.Second

func newTakeoverHook(srv *mochi.Server, log *slog.Logger) *takeoverHook {
	return &takeoverHook{srv: srv, log: log, old: make(map[*mochi.Client]*orphans)}
}

func (h *takeoverHook) ID() string { return "robotexec-takeover" }

func (h *takeoverHook) Provides(b byte) bool {
	return b == mochi.OnSessionEstablish || b == mochi.OnSessionEstablished || b == mochi.OnQosPublish
}

// OnSessionEstablish runs before mochi looks for a session to resume.
func (h *takeoverHook) OnSessionEstablish(cl *mochi.Client, pk packets.Packet) {
	if pk.Connect.Clean {
		return
	}
	existing, ok := h.srv.Clients.Get(cl.ID)
	if !ok || existing == cl || existing.Properties.Clean && existing.Properties.ProtocolVersion < 5 {
		return
	}
	h.mu.Lock()
	h.old[existing] = &orphans{}
	h.mu.Unlock()
	time.AfterFunc(takeoverWindow, func() {
		h.mu.Lock()
		delete(h.old, existing)
		h.mu.Unlock()
	})
}

// OnQosPublish runs when mochi stores a message for cl.
func (h *takeoverHook) OnQosPublish(cl *mochi.Client, pk packets.Packet, _ int64, _ int) {
	if pk.FixedHeader.Type != packets.Publish {
		return
	}
	h.mu.Lock()
	o, ok := h.old[cl]
	if !ok {
		h.mu.Unlock()
		return
	}
	if o.next == nil {
		// Copy(false) drops the packet identifier, which forward
		// needs to tell the messages mochi copied with the session.
		c := pk.Copy(false)
		c.PacketID = pk.PacketID
		o.pks = append(o.pks, c)
		h.mu.Unlock()
		return
	}
	next := o.next
	h.mu.Unlock()
	h.forward(next, []packets.Packet{pk})
}

// OnSessionEstablished runs once the new client receives publications.
func (h *takeoverHook) OnSessionEstablished(cl *mochi.Client, _ packets.Packet) {
	h.mu.Lock()
	var pks []packets.Packet
	for old, o := range h.old {
		if old != cl && old.ID == cl.ID && o.next == nil {
			o.next = cl
			pks = append(pks, o.pks...)
			o.pks = nil
		}
	}
	h.mu.Unlock()
	h.forward(cl, pks)
}

// forward stores and sends to cl the messages that its copy of the session
// lacks.
func (h *takeoverHook) forward(cl *mochi.Client, pks []packets.Packet) {
	for _, pk := range pks {
		if have, ok := cl.State.Inflight.Get(pk.PacketID); ok && have.TopicName == pk.TopicName && bytes.Equal(have.Payload, pk.Payload) {
			continue // copied with the session
		}
		id, err := cl.NextPacketID()
		if err != nil {
			h.log.Warn("broker: session takeover: no packet identifier left; message dropped", "client", cl.ID, "topic", pk.TopicName)
			continue
		}
		out := pk.Copy(false)
		out.PacketID = uint16(id)
		cl.State.Inflight.Set(out)
		// A failed write leaves the message in the session, sent again
		// on the next connection.
		_ = cl.WritePacket(out)
	}
}
