package broker

import (
	"sync"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// retainGuardHook orders what mochi (v2.7.9) leaves racing: storing a
// retained message (TopicsIndex.RetainMessage writes the topic's retained
// path under the index's locks) and finding the retained messages of a
// new subscription (TopicsIndex.Messages reads those paths without them).
// The race detector reported it when a client published a retained
// message while another subscribed. A retained publication holds the
// guard from the hooks' check of the publication (OnPublish, the last
// hook) until it is stored (OnRetainMessage), with nothing in between
// that may return; a SUBSCRIBE holds it shared from OnSubscribed until
// its packet is processed (OnPacketProcessed), the retained copies sent.
//
// A subscriber whose connection does not take its retained copies holds
// the guard until its write deadline: retained publications wait as long.
type retainGuardHook struct {
	mochi.HookBase
	mu sync.RWMutex

	hmu  sync.Mutex
	held map[*mochi.Client]bool // true: exclusive, false: shared
}

func newRetainGuardHook() *retainGuardHook {
	return &retainGuardHook{held: make(map[*mochi.Client]bool)}
}

func (h *retainGuardHook) ID() string { return "robotexec-retain-guard" }

func (h *retainGuardHook) Provides(b byte) bool {
	switch b {
	case mochi.OnPublish, mochi.OnRetainMessage, mochi.OnSubscribed, mochi.OnPacketProcessed, mochi.OnDisconnect:
		return true
	}
	return false
}

// OnPublish runs as the last hook of a publication: when it returns,
// mochi stores a retained one (processPublish, retainMessage).
func (h *retainGuardHook) OnPublish(cl *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	if pk.FixedHeader.Retain {
		h.mu.Lock()
		h.mark(cl, true)
	}
	return pk, nil
}

// OnRetainMessage runs once the retained message is stored.
func (h *retainGuardHook) OnRetainMessage(cl *mochi.Client, _ packets.Packet, _ int64) {
	h.release(cl)
}

// OnSubscribed runs before mochi answers a SUBSCRIBE and sends the
// retained messages of its filters.
func (h *retainGuardHook) OnSubscribed(cl *mochi.Client, _ packets.Packet, _ []byte) {
	if cl.Net.Inline {
		return // no packet to be processed: nothing would release it
	}
	h.mu.RLock()
	h.mark(cl, false)
}

// OnPacketProcessed runs after every packet that mochi handled.
func (h *retainGuardHook) OnPacketProcessed(cl *mochi.Client, pk packets.Packet, _ error) {
	if pk.FixedHeader.Type == packets.Subscribe {
		h.release(cl)
	}
}

// OnDisconnect releases what a client may hold: a guard kept by mistake
// would stop every retained publication.
func (h *retainGuardHook) OnDisconnect(cl *mochi.Client, _ error, _ bool) {
	h.release(cl)
}

func (h *retainGuardHook) mark(cl *mochi.Client, exclusive bool) {
	h.hmu.Lock()
	h.held[cl] = exclusive
	h.hmu.Unlock()
}

// release unlocks what cl holds, if anything.
func (h *retainGuardHook) release(cl *mochi.Client) {
	h.hmu.Lock()
	exclusive, ok := h.held[cl]
	delete(h.held, cl)
	h.hmu.Unlock()
	switch {
	case !ok:
	case exclusive:
		h.mu.Unlock()
	default:
		h.mu.RUnlock()
	}
}
