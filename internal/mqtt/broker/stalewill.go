package broker

import (
	"sync"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// staleWillHook voids the last will of a connection that another
// connection with its client ID replaces. mochi publishes the will of a
// replaced connection when that connection's goroutine ends, which may be
// after the new connection said "online" on its status topic: the will
// would then leave "offline" retained for a client that is connected. The
// client is back: its will is stale. (mochi v2.7.9 publishes that will only
// when the takeover finds the old connection's goroutine waiting for a
// packet; when it finds it between two packets, Client.Read returns nil
// and mochi drops the will as after a DISCONNECT. Either way the will does
// not reach its topic.)
type staleWillHook struct {
	mochi.HookBase
	srv *mochi.Server

	mu       sync.Mutex
	replaced map[*mochi.Client]bool
}

// voidTopic is where a stale will goes: a topic that no wildcard matches,
// not retained.
const voidTopic = "$robotexec/stale-will"

func newStaleWillHook(srv *mochi.Server) *staleWillHook {
	return &staleWillHook{srv: srv, replaced: make(map[*mochi.Client]bool)}
}

func (h *staleWillHook) ID() string { return "robotexec-stale-will" }

func (h *staleWillHook) Provides(b byte) bool {
	return b == mochi.OnSessionEstablish || b == mochi.OnWill || b == mochi.OnDisconnect
}

// OnSessionEstablish runs before mochi takes the old connection's session
// over and stops it.
func (h *staleWillHook) OnSessionEstablish(cl *mochi.Client, _ packets.Packet) {
	if old, ok := h.srv.Clients.Get(cl.ID); ok && old != cl {
		h.mu.Lock()
		h.replaced[old] = true
		h.mu.Unlock()
	}
}

// OnWill runs in the old connection's goroutine, before its will goes out.
func (h *staleWillHook) OnWill(cl *mochi.Client, will mochi.Will) (mochi.Will, error) {
	h.mu.Lock()
	stale := h.replaced[cl]
	h.mu.Unlock()
	if stale || cl.IsTakenOver() {
		will.TopicName, will.Retain = voidTopic, false
	}
	return will, nil
}

// OnDisconnect runs after the will, once per connection: the record goes.
func (h *staleWillHook) OnDisconnect(cl *mochi.Client, _ error, _ bool) {
	h.mu.Lock()
	delete(h.replaced, cl)
	h.mu.Unlock()
}
