package view

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"
)

// channel is an advertised channel: a topic in one encoding, and the
// subscriptions of viewers to it.
type channel struct {
	id             uint32
	topic          string
	encoding       string
	schemaName     string
	schema         string
	schemaEncoding string

	mu   sync.Mutex                // serializes changes of subs
	subs atomic.Pointer[[]viewSub] // copied on change, read by forward
}

// viewSub is a viewer's subscription to a channel.
type viewSub struct {
	c  *conn
	id uint32
}

// watched reports whether a viewer subscribes to ch.
func (ch *channel) watched() bool {
	s := ch.subs.Load()
	return s != nil && len(*s) > 0
}

// forward offers a message to the subscribers of ch, one copy of its
// payload for all of them.
func (ch *channel) forward(payload []byte, ts uint64) {
	subs := ch.subs.Load()
	if subs == nil || len(*subs) == 0 {
		return
	}
	p := bytes.Clone(payload)
	for _, s := range *subs {
		s.c.offer(frame{sub: s.id, ch: ch, ts: ts, payload: p})
	}
}

// subscribe adds a viewer's subscription.
func (ch *channel) subscribe(s viewSub) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	var subs []viewSub
	if old := ch.subs.Load(); old != nil {
		subs = slices.Clone(*old)
	}
	subs = append(subs, s)
	ch.subs.Store(&subs)
}

// unsubscribe removes a viewer's subscription.
func (ch *channel) unsubscribe(s viewSub) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	old := ch.subs.Load()
	if old == nil {
		return
	}
	subs := slices.DeleteFunc(slices.Clone(*old), func(x viewSub) bool { return x == s })
	ch.subs.Store(&subs)
}
