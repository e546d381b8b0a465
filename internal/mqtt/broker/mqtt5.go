package broker

import (
	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// mqtt5Hook mends three things of mochi's MQTT 5 (v2.7.9) that a client
// which tells the broker what it needs relies on (robotexec's client:
// package internal/mqtt).
//
//   - Subscription identifiers on retained messages: mochi sends the
//     retained messages of a new subscription without its identifier,
//     which MQTT 5 requires on them (3.3.4); the client then cannot tell
//     which of its subscriptions they are for.
//   - No Local and shared subscriptions: mochi merges a client's
//     subscriptions that match a message into one, and the merge is No
//     Local when any of them is; a client's own message then misses the
//     client's shared subscription that the broker picked for it. The
//     hook leaves the client's No Local subscriptions out of such a
//     message, which they must not get anyway.
//   - Flow control: past a client's Receive Maximum, mochi holds the
//     messages and later sends them out of order, one per packet the
//     client sends, and forgets them once sent (they are then lost at a
//     reconnection, and the quota shrinks for good); and the code that
//     sends them takes a read lock twice, which deadlocks the client's
//     connection against a publication to it. The hook turns mochi's send
//     quota off, as it is for MQTT 3.1.1 clients, and the connection's
//     flow (flow.go) holds the messages past the Receive Maximum instead.
type mqtt5Hook struct {
	mochi.HookBase
}

func (h *mqtt5Hook) ID() string { return "robotexec-mqtt5" }

func (h *mqtt5Hook) Provides(b byte) bool {
	switch b {
	case mochi.OnSubscribed, mochi.OnSelectSubscribers, mochi.OnSessionEstablished:
		return true
	}
	return false
}

// OnSubscribed runs after mochi recorded the subscriptions of pk and
// before it sends their retained messages, from pk.Filters, which shares
// its elements with mochi's: each filter there carries the SUBSCRIBE's
// identifier where mochi looks for it then. (Set on the recorded
// subscriptions, a map of identifiers would be written by every
// publication that merges them, from several goroutines.)
func (h *mqtt5Hook) OnSubscribed(_ *mochi.Client, pk packets.Packet, _ []byte) {
	for i, f := range pk.Filters {
		if f.Identifier > 0 && f.Identifiers == nil {
			pk.Filters[i].Identifiers = map[string]int{f.Filter: f.Identifier}
		}
	}
}

// OnSelectSubscribers picks the members of the shared subscriptions that
// get pk, as mochi would, and takes the publisher's No Local
// subscriptions out when the publisher is one of them.
func (h *mqtt5Hook) OnSelectSubscribers(subs *mochi.Subscribers, pk packets.Packet) *mochi.Subscribers {
	if pk.Origin == "" {
		return subs
	}
	subs.SelectShared()
	if _, picked := subs.SharedSelected[pk.Origin]; picked {
		if s, ok := subs.Subscriptions[pk.Origin]; ok && s.NoLocal {
			delete(subs.Subscriptions, pk.Origin)
		}
	}
	return subs
}

// OnSessionEstablished runs once mochi set the client's send quota from
// its Receive Maximum: a maximum of 0 turns it off.
func (h *mqtt5Hook) OnSessionEstablished(cl *mochi.Client, _ packets.Packet) {
	cl.State.Inflight.ResetSendQuota(0)
}
