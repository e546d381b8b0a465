package mqtt

import (
	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
)

// copyStore is paho's ordered memory store (in-flight messages are sent
// again in their original order after a reconnection; paho's default
// store resends in random order) that keeps and hands out copies of
// publications. paho stores the very packet it is writing, and on
// resuming a session sets the DUP flag of stored packets, which races with
// the write of a publication made as the connection came up
// (eclipse-paho/paho.mqtt.golang#703). With copies, such a publication is
// at worst sent twice, which at-least-once delivery allows.
type copyStore struct{ paho.Store }

func newStore() paho.Store { return copyStore{paho.NewOrderedMemoryStore()} }

func (s copyStore) Put(key string, p packets.ControlPacket) { s.Store.Put(key, clonePacket(p)) }

func (s copyStore) Get(key string) packets.ControlPacket { return clonePacket(s.Store.Get(key)) }

func clonePacket(p packets.ControlPacket) packets.ControlPacket {
	if pp, ok := p.(*packets.PublishPacket); ok && pp != nil {
		c := *pp
		return &c
	}
	return p
}
