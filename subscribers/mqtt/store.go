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
// at worst sent twice, which at-least-once delivery allows; on the first
// connection the client hands none to paho before it resumed (see
// onConnect).
//
// It also tells the poison guard (poison.go) when a publication is
// written and acknowledged, and puts the guard's suspect last, or drops
// it, when paho resumes after a reconnection.
type copyStore struct {
	paho.Store
	guard     *poisonGuard
	beforeAll func() // tests: runs when paho lists the store (Config.beforeResume)
}

func newStore(g *poisonGuard, beforeAll func()) paho.Store {
	return copyStore{Store: paho.NewOrderedMemoryStore(), guard: g, beforeAll: beforeAll}
}

func (s copyStore) Put(key string, p packets.ControlPacket) {
	if _, ok := isPublish(key, p); ok {
		s.guard.wrote(key)
	}
	s.Store.Put(key, clonePacket(p))
}

// Get returns a copy of the entry; paho gets an entry to send it again.
func (s copyStore) Get(key string) packets.ControlPacket {
	p := s.Store.Get(key)
	if _, ok := isPublish(key, p); ok {
		s.guard.wrote(key)
	}
	return clonePacket(p)
}

func (s copyStore) Del(key string) {
	s.guard.forget(key)
	s.Store.Del(key)
}

// All returns the keys in order, for paho to resume, with the poison
// guard's suspect last, or without it, deleted, on its second strike.
func (s copyStore) All() []string {
	if s.beforeAll != nil {
		s.beforeAll()
	}
	keys := s.Store.All()
	key, pp, drop := s.guard.suspect(keys, s.Store.Get)
	if key == "" {
		return keys
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if k != key {
			out = append(out, k)
		}
	}
	if drop {
		s.Store.Del(key)
		s.guard.drop(key, pp)
		return out
	}
	return append(out, key)
}

func (s copyStore) Reset() {
	s.guard.reset()
	s.Store.Reset()
}

func clonePacket(p packets.ControlPacket) packets.ControlPacket {
	if pp, ok := p.(*packets.PublishPacket); ok && pp != nil {
		c := *pp
		return &c
	}
	return p
}
