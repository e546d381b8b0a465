package broker

import (
	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// noLocalHook marks the subscriptions for which Config.NoLocal says so as
// MQTT 5's "no local": the broker never sends such a subscription's client
// the messages that client published. MQTT 3.1.1 clients cannot ask for it
// themselves; the process that embeds the broker delivers its own
// publications to its own subscriptions directly and asks it for its
// client.
type noLocalHook struct {
	mochi.HookBase
	noLocal func(clientID, filter string) bool
}

func (h *noLocalHook) ID() string { return "robotexec-no-local" }

func (h *noLocalHook) Provides(b byte) bool { return b == mochi.OnSubscribe }

// OnSubscribe runs before mochi records the subscriptions of pk.
func (h *noLocalHook) OnSubscribe(cl *mochi.Client, pk packets.Packet) packets.Packet {
	for i, f := range pk.Filters {
		// MQTT 5 forbids it on shared subscriptions: the broker picks
		// their member, maybe this client, for its own messages too.
		if !mochi.IsSharedFilter(f.Filter) && h.noLocal(cl.ID, f.Filter) {
			pk.Filters[i].NoLocal = true
		}
	}
	return pk
}
