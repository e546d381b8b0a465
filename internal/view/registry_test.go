package view_test

import (
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/view"
)

// channelOf returns the id and encoding of topic's channel in m.
func channelOf(m message, topic string) (uint32, string) {
	for _, ch := range m.Channels {
		if ch.Topic == topic {
			return ch.ID, ch.Encoding
		}
	}
	return 0, ""
}

// synced waits until the server has handled the viewer's requests so far.
func synced(t *testing.T, ws *websocket.Conn) {
	t.Helper()
	send(t, ws, map[string]any{"op": "probe"})
	nextOp(t, ws, "status")
}

// nextData reads messages up to the next Message Data.
func nextData(t *testing.T, ws *websocket.Conn) (uint32, []byte) {
	t.Helper()
	for {
		if m, sub, _, p := next(t, ws); m.Op == "" {
			return sub, p
		}
	}
}

// TestGraphNamesChannels: the topics that the connection graph names get
// JSON channels before any message of theirs, not its topic filters; a
// message then goes to its subscribers, and a payload that is not JSON to
// the topic's raw channel.
func TestGraphNamesChannels(t *testing.T) {
	t.Parallel()
	s := listen(t, view.Options{Anonymous: true, ConnectionGraph: true})
	s.SetGraph(view.Graph{
		Publishers:  map[string][]string{"robot/a": {"p@1"}, "robot/+/raw": {"p@1"}},
		Subscribers: map[string][]string{"robot/b": {"s@2"}, "robot/#": {"s@2"}},
	})
	ws, _, err := dial(t, s, "", "")
	require.NoError(t, err)
	nextOp(t, ws, "serverInfo")
	ad := nextOp(t, ws, "advertise")
	require.Len(t, ad.Channels, 2, "%+v", ad.Channels)
	a, encA := channelOf(ad, "robot/a")
	b, encB := channelOf(ad, "robot/b")
	require.Equal(t, view.JSONEncoding, encA)
	require.Equal(t, view.JSONEncoding, encB)

	subscribe(t, ws, 1, a)
	subscribe(t, ws, 2, b)
	synced(t, ws)
	s.Observe("robot/a", []byte(`{"x":1}`), time.Now())
	sub, p := nextData(t, ws)
	require.Equal(t, uint32(1), sub)
	require.JSONEq(t, `{"x":1}`, string(p))

	s.Observe("robot/b", []byte{0xff, 0x00}, time.Now())
	ad = nextOp(t, ws, "advertise")
	raw, enc := channelOf(ad, "robot/b")
	require.Equal(t, view.RawEncoding, enc)
	require.NotEqual(t, b, raw)
	require.Equal(t, uint64(3), s.Stats().Channels)
}

// TestEvictLeastRecent: past MaxChannels, the least recently seen topic's
// channel is unadvertised to make room for a new one, counted; its
// subscribers get no more of it, and a message of it later makes a new
// channel.
func TestEvictLeastRecent(t *testing.T) {
	t.Parallel()
	s := listen(t, view.Options{Anonymous: true, MaxChannels: 2})
	ws, _, err := dial(t, s, "", "")
	require.NoError(t, err)
	nextOp(t, ws, "serverInfo")
	s.Observe("a", []byte(`1`), time.Now())
	a, _ := channelOf(nextOp(t, ws, "advertise"), "a")
	s.Observe("b", []byte(`2`), time.Now())
	b, _ := channelOf(nextOp(t, ws, "advertise"), "b")
	subscribe(t, ws, 1, a)
	subscribe(t, ws, 2, b)
	synced(t, ws)
	s.Observe("a", []byte(`3`), time.Now()) // a is now seen after b
	sub, _ := nextData(t, ws)
	require.Equal(t, uint32(1), sub)

	s.Observe("c", []byte(`4`), time.Now())
	require.Equal(t, []uint32{b}, nextOp(t, ws, "unadvertise").ChannelIDs)
	c, _ := channelOf(nextOp(t, ws, "advertise"), "c")
	require.NotZero(t, c)
	st := s.Stats()
	require.Equal(t, uint64(2), st.Channels)
	require.Equal(t, uint64(1), st.Evicted)

	s.Observe("b", []byte(`5`), time.Now()) // evicts a, seen before c
	require.Equal(t, []uint32{a}, nextOp(t, ws, "unadvertise").ChannelIDs)
	b2, _ := channelOf(nextOp(t, ws, "advertise"), "b")
	require.NotEqual(t, b, b2)
	s.Observe("a", []byte(`6`), time.Now()) // evicts c; no message of it for sub 1
	require.Equal(t, []uint32{c}, nextOp(t, ws, "unadvertise").ChannelIDs)
	subscribe(t, ws, 1, a) // the old channel is gone, and sub 1 is free again
	require.Equal(t, "status", nextOp(t, ws, "status").Op)
	require.Equal(t, uint64(3), s.Stats().Evicted)
}
