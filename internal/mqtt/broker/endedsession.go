package broker

import (
	"log/slog"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// endedSessionHook closes a gap in mochi's handling of a client whose
// session ends with its connection (MQTT 3.1.1's clean session, MQTT 5's
// Session Expiry 0) and that reconnects at once (v2.7.9, attachClient):
// the old connection's goroutine clears the session by client ID,
// unsubscribing its filters and removing the client from the broker's
// clients, and when it does so after the new connection was established
// it removes the new connection's subscriptions and client instead:
// nothing reaches the new connection any more, and it is not told. The
// hook makes the new connection wait, before its session is set up, until
// the old one's is cleared: it ends the old connection (as a takeover
// does) and waits for its goroutine.
//
// TestCleanSessionReconnect failed in each of 3 runs without this hook.
type endedSessionHook struct {
	mochi.HookBase
	srv *mochi.Server
	log *slog.Logger
}

// endedSessionWait bounds the wait for the old connection's goroutine,
// which takes microseconds.
const endedSessionWait = 5 * time.Second

func (h *endedSessionHook) ID() string { return "robotexec-ended-session" }

func (h *endedSessionHook) Provides(b byte) bool { return b == mochi.OnConnect }

// OnConnect runs before mochi looks for a session to resume.
func (h *endedSessionHook) OnConnect(cl *mochi.Client, _ packets.Packet) error {
	old, ok := h.srv.Clients.Get(cl.ID)
	if !ok || old == cl || !endsWithConnection(old) {
		return nil
	}
	_ = h.srv.DisconnectClient(old, packets.ErrSessionTakenOver)
	deadline := time.Now().Add(endedSessionWait)
	for {
		if cur, ok := h.srv.Clients.Get(cl.ID); !ok || cur != old {
			return nil
		}
		if time.Now().After(deadline) {
			h.log.Warn("broker: the previous connection of a reconnecting client did not end in time", "client", cl.ID)
			return nil
		}
		time.Sleep(time.Millisecond)
	}
}

// endsWithConnection reports whether cl's session ends when its
// connection does, as mochi decides it.
func endsWithConnection(cl *mochi.Client) bool {
	if cl.Properties.ProtocolVersion == 5 {
		return cl.Properties.Props.SessionExpiryInterval == 0
	}
	return cl.Properties.Clean
}
