package mqtt

import (
	paho3 "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
)

// copyStore is paho.mqtt.golang's ordered memory store (in-flight
// messages are sent again in their original order after a reconnection;
// paho's default store resends in random order) that keeps and hands out
// copies of publications. paho stores the very packet it is writing, and
// on resuming a session sets the DUP flag of stored packets, which races
// with the write of a publication made as the connection came up
// (eclipse-paho/paho.mqtt.golang#703). The client's MQTT 3.1.1
// connections share it, so that a persistent session's in-flight
// publications are sent again on the next connection.
type copyStore struct{ paho3.Store }

func newStore3() paho3.Store { return copyStore{paho3.NewOrderedMemoryStore()} }

func (s copyStore) Put(key string, p packets.ControlPacket) { s.Store.Put(key, clonePacket(p)) }

// Get returns a copy of the entry; paho gets an entry to send it again.
func (s copyStore) Get(key string) packets.ControlPacket { return clonePacket(s.Store.Get(key)) }

func clonePacket(p packets.ControlPacket) packets.ControlPacket {
	if pp, ok := p.(*packets.PublishPacket); ok && pp != nil {
		c := *pp
		return &c
	}
	return p
}
