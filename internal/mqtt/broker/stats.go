package broker

import (
	"errors"
	"sync/atomic"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Stats are the broker's counts of what it refused, since New, and its
// open connections.
type Stats struct {
	// Connections is the number of connections open now, those that
	// have not sent their CONNECT yet included.
	Connections int
	// ConnectionsRefused counts the connections closed as they were
	// accepted because Config.MaxConnections were open.
	ConnectionsRefused uint64
	// ConnectsTooLarge counts the connections closed because their first
	// packet, the CONNECT, was larger than 64 KiB (or than
	// Config.MaxPacketSize, when that is smaller): a client may send no
	// more before it has authenticated.
	ConnectsTooLarge uint64
	// ConnectTimeouts counts the connections closed because their
	// CONNECT (and TLS handshake) had not arrived 10 seconds after they
	// were accepted.
	ConnectTimeouts uint64
	// PacketsTooLarge counts the connections closed because a packet
	// after the CONNECT was larger than Config.MaxPacketSize.
	PacketsTooLarge uint64
	// Unauthorized counts the publications refused because their client
	// may not write to their topic (see User.Write).
	Unauthorized uint64
}

// Stats returns the broker's counts. It may be called at any time, also
// after Close.
func (b *Broker) Stats() Stats {
	return Stats{
		Connections:        b.ln.open(),
		ConnectionsRefused: b.counts.refused.Load(),
		ConnectsTooLarge:   b.counts.connectsTooLarge.Load(),
		ConnectTimeouts:    b.counts.connectTimeouts.Load(),
		PacketsTooLarge:    b.counts.packetsTooLarge.Load(),
		Unauthorized:       b.counts.unauthorized.Load(),
	}
}

// counters are the counts behind Stats, kept by the listener and hooks.
type counters struct {
	refused, connectsTooLarge, connectTimeouts, packetsTooLarge, unauthorized atomic.Uint64
}

// limitHook counts the clients that mochi disconnects for a packet larger
// than Config.MaxPacketSize. mochi checks a packet's size as it reads the
// packet's header, before it allocates for the packet.
type limitHook struct {
	mochi.HookBase
	counts *counters
}

func (h *limitHook) ID() string { return "robotexec-limits" }

func (h *limitHook) Provides(b byte) bool { return b == mochi.OnDisconnect }

func (h *limitHook) OnDisconnect(_ *mochi.Client, err error, _ bool) {
	if errors.Is(err, packets.ErrPacketTooLarge) {
		h.counts.packetsTooLarge.Add(1)
	}
}
