package broker

import (
	"sync/atomic"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/robotexec/robotexec/internal/bus"
)

// audienceHook counts the changes of the broker's subscriptions: any
// subscription, unsubscription, session taken over, client gone or
// expired may change who wants a topic. It also removes the subscriptions
// of an expired session, which mochi (v2.7.9, clearExpiredClients) leaves
// in its topic tree: they would count as audience forever, and deliver
// their messages to the next client with that client ID, in a new session
// that never subscribed to them.
type audienceHook struct {
	mochi.HookBase
	srv *mochi.Server
	gen atomic.Uint64
}

func (h *audienceHook) ID() string { return "robotexec-audience" }

func (h *audienceHook) Provides(b byte) bool {
	switch b {
	case mochi.OnSubscribed, mochi.OnUnsubscribed, mochi.OnSessionEstablished, mochi.OnDisconnect, mochi.OnClientExpired:
		return true
	}
	return false
}

func (h *audienceHook) OnSubscribed(*mochi.Client, packets.Packet, []byte) { h.gen.Add(1) }
func (h *audienceHook) OnUnsubscribed(*mochi.Client, packets.Packet)       { h.gen.Add(1) }
func (h *audienceHook) OnSessionEstablished(*mochi.Client, packets.Packet) { h.gen.Add(1) }
func (h *audienceHook) OnDisconnect(*mochi.Client, error, bool)            { h.gen.Add(1) }

// OnClientExpired runs when cl's session expired, before mochi forgets cl.
func (h *audienceHook) OnClientExpired(cl *mochi.Client) {
	// A session taken over keeps its subscriptions, with the same client
	// ID: UnsubscribeClient leaves those alone.
	h.srv.UnsubscribeClient(cl)
	h.gen.Add(1)
}

// AudienceOf returns who, besides the client clientID, wants the messages
// of a topic: a bus.Audience for that client's router, so that
// its publications that nobody else subscribes to stay in its process. It
// is a bus.RetainKeeper too.
// Offline persistent sessions and shared subscriptions (whose members the
// broker picks, maybe clientID) count as wanting. A client that
// subscribes while a publication is made may miss it, as MQTT allows
// before its SUBACK.
func (b *Broker) AudienceOf(clientID string) bus.Audience {
	return audience{b: b, client: clientID}
}

type audience struct {
	b      *Broker
	client string
}

func (a audience) Generation() uint64 { return a.b.audience.gen.Load() }

func (a audience) Wanted(topic string) bool {
	subs := a.b.srv.Topics.Subscribers(topic)
	if len(subs.Shared) > 0 || len(subs.InlineSubscriptions) > 0 {
		return true
	}
	for id := range subs.Subscriptions {
		if id != a.client {
			return true
		}
	}
	return false
}

// OwnRetained returns the retained messages on topics that filter matches
// that the client itself published and the broker keeps: the broker does
// not send them back to it on a no-local subscription.
func (a audience) OwnRetained(filter string) []bus.Message {
	var out []bus.Message
	for _, pk := range a.b.srv.Topics.Messages(filter) {
		if pk.Origin != a.client {
			continue
		}
		out = append(out, bus.Message{Topic: pk.TopicName, Payload: pk.Payload, QoS: pk.FixedHeader.Qos,
			Retained: true, Received: time.Unix(pk.Created, 0)})
	}
	return out
}

// The router asks an audience that keeps retained messages for them.
var _ bus.RetainKeeper = audience{}
