package broker

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"
)

// The window that takeoverHook covers, between mochi's copy of an old
// session's in-flight messages and the new client's establishment, lasts
// microseconds: these tests call the hook as mochi would in it.

func publish(id uint16, topic, payload string) packets.Packet {
	return packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1}, PacketID: id,
		TopicName: topic, Payload: []byte(payload)}
}

// The messages stored for the old client during a takeover go to the new
// client, with identifiers of its own, except those mochi copied; those
// stored after it is established go straight to it.
func TestTakeoverForwardsOrphans(t *testing.T) {
	srv := mochi.New(&mochi.Options{Logger: slog.New(slog.DiscardHandler)})
	h := newTakeoverHook(srv, slog.New(slog.DiscardHandler))
	old := srv.NewClient(nil, "t", "robot", false)
	srv.Clients.Add(old)
	next := srv.NewClient(nil, "t", "robot", false)
	h.OnSessionEstablish(next, packets.Packet{Connect: packets.ConnectParams{Clean: false}})

	copied := publish(7, "a", "copied")
	next.State.Inflight.Set(copied) // mochi's copy
	h.OnQosPublish(old, copied, 0, 0)
	h.OnQosPublish(old, publish(8, "a", "missed"), 0, 0)
	h.OnQosPublish(old, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Pubrec}, PacketID: 9}, 0, 0)
	h.OnQosPublish(srv.NewClient(nil, "t", "other", false), publish(9, "a", "other's"), 0, 0)
	require.Equal(t, 1, next.State.Inflight.Len(), "forwarded before the new client is established")

	h.OnSessionEstablished(next, packets.Packet{})
	h.OnQosPublish(old, publish(9, "a", "late"), 0, 0)
	payloads := map[string]uint16{}
	for _, pk := range next.State.Inflight.GetAll(false) {
		payloads[string(pk.Payload)] = pk.PacketID
	}
	require.Len(t, payloads, 3, "%v", payloads)
	require.Equal(t, uint16(7), payloads["copied"])
	require.NotZero(t, payloads["missed"])
	require.NotZero(t, payloads["late"])
	require.NotEqual(t, payloads["missed"], payloads["late"])
}

// A takeover of a session that does not persist, or by a clean session,
// forwards nothing; nor does one whose new client has no identifier
// left, which logs a warning.
func TestTakeoverNothingToForward(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	srv := mochi.New(&mochi.Options{Logger: slog.New(slog.DiscardHandler)})
	h := newTakeoverHook(srv, slog.New(slog.NewTextHandler(&logs, nil)))
	old := srv.NewClient(nil, "t", "robot", false)
	srv.Clients.Add(old)
	clean := srv.NewClient(nil, "t", "robot", false)
	h.OnSessionEstablish(clean, packets.Packet{Connect: packets.ConnectParams{Clean: true}})
	h.OnQosPublish(old, publish(1, "a", "x"), 0, 0)
	h.OnSessionEstablished(clean, packets.Packet{})
	require.Zero(t, clean.State.Inflight.Len(), "a clean session inherits nothing")

	old.Properties.Clean, old.Properties.ProtocolVersion = true, 4
	next := srv.NewClient(nil, "t", "robot", false)
	h.OnSessionEstablish(next, packets.Packet{})
	h.OnQosPublish(old, publish(1, "a", "x"), 0, 0)
	h.OnSessionEstablished(next, packets.Packet{})
	require.Zero(t, next.State.Inflight.Len(), "an MQTT 3.1.1 clean session leaves nothing")

	old.Properties.Clean = false
	full := srv.NewClient(nil, "t", "robot", false)
	for id := 1; id <= 65535; id++ {
		full.State.Inflight.Set(publish(uint16(id), "b", "queued"))
	}
	h.OnSessionEstablish(full, packets.Packet{})
	h.OnQosPublish(old, publish(1, "a", "x"), 0, 0)
	h.OnSessionEstablished(full, packets.Packet{})
	require.Equal(t, 65535, full.State.Inflight.Len())
	require.Contains(t, logs.String(), "no packet identifier left; message dropped")
}

// A SUBSCRIBE whose identifier clashes with a message in flight keeps it
// when the client has no other identifier free: mochi answers 0x91, as
// without the hook.
func TestPacketIDNoneFree(t *testing.T) {
	t.Parallel()
	srv := mochi.New(&mochi.Options{Logger: slog.New(slog.DiscardHandler)})
	cl := srv.NewClient(nil, "t", "c", false)
	for id := 1; id <= 65535; id++ {
		cl.State.Inflight.Set(publish(uint16(id), "b", "queued"))
	}
	h := newPacketIDHook()
	sub := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Subscribe}, PacketID: 5}
	got, err := h.OnPacketRead(cl, sub)
	require.NoError(t, err)
	require.Equal(t, uint16(5), got.PacketID)
	require.Empty(t, h.swapped)
}

// quietHandler demotes routine messages, keeps warnings, and logs
// packets by type, topic and size, with groups as asked.
func TestQuietHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(quietHandler{h: slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})})
	pk := publish(1, "a/b", "secret")
	log.WithGroup("g").Info("routine", "pk", &pk, "nil", (*packets.Packet)(nil), "other", struct{ A int }{1})
	log.Warn("serious", "sub", packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Subscribe}},
		"odd", packets.Packet{FixedHeader: packets.FixedHeader{Type: 99}})
	out := buf.String()
	require.NotContains(t, out, "secret")
	require.Contains(t, out, `level=DEBUG msg="broker: routine" g.pk="Publish \"a/b\" (6 bytes, QoS 1)" g.nil=<nil> g.other={A:1}`)
	require.Contains(t, out, `level=WARN msg="broker: serious" sub=Subscribe odd=packet`)

	buf.Reset()
	log = slog.New(quietHandler{h: slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})})
	log.Info("routine")
	require.Empty(t, buf.String(), "routine messages are Debug")
	require.True(t, log.Handler().Enabled(context.Background(), slog.LevelInfo), "Info records still reach Handle, to be demoted")
}
