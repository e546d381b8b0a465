package broker

import (
	"context"
	"fmt"
	"log/slog"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// quietHandler demotes mochi's routine messages to Debug.
type quietHandler struct{ h slog.Handler }

func (q quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return q.h.Enabled(ctx, min(l, slog.LevelDebug)) || q.h.Enabled(ctx, l)
}

func (q quietHandler) Handle(ctx context.Context, r slog.Record) error {
	level := r.Level
	msg := r.Message
	switch {
	case msg == "":
		// A listener's report that a connection ended with an error
		// (most often EOF when a client goes away).
		level, msg = slog.LevelDebug, "client connection ended"
	case level == slog.LevelInfo:
		level = slog.LevelDebug
	case msg == mochi.ErrMinimumKeepalive.Error():
		level = slog.LevelDebug
	}
	if !q.h.Enabled(ctx, level) {
		return nil
	}
	nr := slog.NewRecord(r.Time, level, "broker: "+msg, r.PC)
	r.Attrs(func(a slog.Attr) bool { nr.AddAttrs(summarize(a)); return true })
	return q.h.Handle(ctx, nr)
}

// summarize replaces mochi's dumps of whole packets, which carry payloads
// and passwords, by their type, topic and size.
func summarize(a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindAny {
		return a
	}
	var pk packets.Packet
	switch v := a.Value.Any().(type) {
	case packets.Packet:
		pk = v
	case *packets.Packet:
		if v == nil {
			return a
		}
		pk = *v
	default:
		return a
	}
	kind, ok := packets.PacketNames[pk.FixedHeader.Type]
	if !ok {
		kind = "packet"
	}
	if pk.TopicName == "" {
		return slog.String(a.Key, kind)
	}
	return slog.String(a.Key, fmt.Sprintf("%s %q (%d bytes, QoS %d)", kind, pk.TopicName, len(pk.Payload), pk.FixedHeader.Qos))
}

func (q quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{h: q.h.WithAttrs(as)}
}

func (q quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h: q.h.WithGroup(name)}
}
