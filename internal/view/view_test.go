package view_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/view"
)

// wait bounds every wait of these tests.
const wait = 10 * time.Second

func listen(t *testing.T, opts view.Options) *view.Server {
	t.Helper()
	opts.Listen = "127.0.0.1:0"
	s, err := view.Listen(opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// dial connects a viewer, with basic authentication when user is set.
func dial(t *testing.T, s *view.Server, user, password string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	h := http.Header{}
	if user != "" {
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+password)))
	}
	d := websocket.Dialer{Subprotocols: []string{view.Subprotocol}, HandshakeTimeout: wait}
	ws, resp, err := d.Dial("ws://"+s.Addr().String()+"/", h)
	if err == nil {
		t.Cleanup(func() { ws.Close() })
		require.Equal(t, view.Subprotocol, ws.Subprotocol())
	}
	return ws, resp, err
}

// message is a JSON message of the server, the fields the tests read.
type message struct {
	Op           string
	Capabilities []string
	Channels     []struct {
		ID              uint32
		Topic, Encoding string
	}
	ChannelIDs []uint32 `json:"channelIds"`
	Level      int
	Message    string
}

// next reads the next message: a JSON one, or a Message Data's
// subscription, time and payload.
func next(t *testing.T, ws *websocket.Conn) (m message, sub uint32, ts uint64, payload []byte) {
	t.Helper()
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(wait)))
	typ, data, err := ws.ReadMessage()
	require.NoError(t, err)
	if typ == websocket.BinaryMessage {
		require.GreaterOrEqual(t, len(data), 13)
		require.Equal(t, byte(1), data[0], "Message Data")
		return m, binary.LittleEndian.Uint32(data[1:]), binary.LittleEndian.Uint64(data[5:]), data[13:]
	}
	require.NoError(t, json.Unmarshal(data, &m), "%s", data)
	return m, 0, 0, nil
}

// nextOp reads messages up to the next JSON one of op.
func nextOp(t *testing.T, ws *websocket.Conn, op string) message {
	t.Helper()
	for {
		if m, _, _, _ := next(t, ws); m.Op == op {
			return m
		}
	}
}

func send(t *testing.T, ws *websocket.Conn, v any) {
	t.Helper()
	require.NoError(t, ws.WriteJSON(v))
}

func subscribe(t *testing.T, ws *websocket.Conn, sub, ch uint32) {
	t.Helper()
	send(t, ws, map[string]any{"op": "subscribe", "subscriptions": []map[string]uint32{{"id": sub, "channelId": ch}}})
}

// TestStalledViewer: a viewer that stops reading never holds Observe up;
// what its queue cannot take is dropped and counted, and what it took is
// sent, in order, once the viewer reads again.
func TestStalledViewer(t *testing.T) {
	t.Parallel()
	s := listen(t, view.Options{Anonymous: true, Queue: 16, QueueBytes: 64 << 10})
	ws, _, err := dial(t, s, "", "")
	require.NoError(t, err)
	nextOp(t, ws, "serverInfo")
	s.Observe("fast", []byte("raw 0"), time.Unix(0, 1)) // raw: no JSON check per message
	ch := nextOp(t, ws, "advertise").Channels[0]
	subscribe(t, ws, 7, ch.ID)
	// The subscription is in place once the server answers a later request.
	send(t, ws, map[string]any{"op": "probe"})
	nextOp(t, ws, "status")

	const n = 5000
	payload := bytes.Repeat([]byte("x"), 10<<10) // 50 MB in all: more than the sockets hold
	done := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		for i := range n {
			s.Observe("fast", payload, time.Unix(0, int64(i+1)))
		}
		done <- time.Since(start)
	}()
	select {
	case d := <-done:
		t.Logf("%d messages observed in %v with a stalled viewer", n, d)
	case <-time.After(wait):
		t.Fatalf("Observe blocked behind a stalled viewer")
	}
	var st view.ConnStats
	require.Eventually(t, func() bool {
		st = s.Stats().Connections[0]
		return st.Sent+st.Dropped >= n-17 // up to the queue and one being written
	}, wait, time.Millisecond)
	require.Positive(t, st.Dropped, "the stalled viewer's messages are dropped")

	var last, got uint64
	for {
		st = s.Stats().Connections[0]
		if got == st.Sent && st.Sent+st.Dropped == n {
			break
		}
		_, sub, ts, p := next(t, ws) // sent, or still queued
		require.Equal(t, uint32(7), sub)
		require.Greater(t, ts, last, "in order")
		require.Len(t, p, len(payload))
		last = ts
		got++
	}
	require.Equal(t, uint64(n), last, "the last message is sent")
}

// TestUsers: with users, a viewer without credentials is refused; a user
// sees the topics of its read filters only, and publishes on those of its
// write filters only.
func TestUsers(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var published []string
	s := listen(t, view.Options{
		Users: []view.User{{Username: "ops", Password: "pw", Read: []string{"robot/#"}, Write: []string{"cmd/#"}}},
		Publish: func(topic string, payload []byte) error {
			mu.Lock()
			defer mu.Unlock()
			published = append(published, topic+" "+string(payload))
			return nil
		},
	})
	for _, cred := range [][2]string{{"", ""}, {"ops", "wrong"}, {"other", "pw"}} {
		_, resp, err := dial(t, s, cred[0], cred[1])
		require.ErrorIs(t, err, websocket.ErrBadHandshake, "%v", cred)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	}

	ws, _, err := dial(t, s, "ops", "pw")
	require.NoError(t, err)
	require.Equal(t, []string{"clientPublish"}, nextOp(t, ws, "serverInfo").Capabilities)
	s.Observe("secret/a", []byte(`1`), time.Now())
	s.Observe("robot/b", []byte(`2`), time.Now())
	ads := nextOp(t, ws, "advertise").Channels
	require.Len(t, ads, 1)
	require.Equal(t, "robot/b", ads[0].Topic)
	subscribe(t, ws, 1, 1) // secret/a's channel, not shown
	require.Equal(t, "subscribe 1: no channel 1", nextOp(t, ws, "status").Message)

	send(t, ws, map[string]any{"op": "advertise", "channels": []map[string]any{
		{"id": 1, "topic": "robot/b", "encoding": "json", "schemaName": ""},
		{"id": 2, "topic": "cmd/go", "encoding": "json", "schemaName": ""},
	}})
	require.Equal(t, "advertise 1 (robot/b): not authorized to publish on robot/b", nextOp(t, ws, "status").Message)
	for _, id := range []uint32{2, 1} { // the answer to 1 comes after 2 was handled
		msg := binary.LittleEndian.AppendUint32([]byte{1}, id)
		require.NoError(t, ws.WriteMessage(websocket.BinaryMessage, append(msg, `{"v":1}`...)))
	}
	require.Equal(t, "message on channel 1, which this viewer did not advertise", nextOp(t, ws, "status").Message)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{`cmd/go {"v":1}`}, published)
}

// TestEncodings: JSON topics are json channels, others raw; a JSON
// topic's payload that is not JSON goes on a raw channel of the topic.
func TestEncodings(t *testing.T) {
	t.Parallel()
	s := listen(t, view.Options{Anonymous: true})
	ws, _, err := dial(t, s, "", "")
	require.NoError(t, err)
	info := nextOp(t, ws, "serverInfo")
	require.Empty(t, info.Capabilities, "no clientPublish without Options.Publish")
	s.Observe("cam", []byte{0xff, 0xd8}, time.Now())
	s.Observe("imu", []byte(`{"ax":1}`), time.Now())
	var chans []string
	for len(chans) < 2 {
		for _, c := range nextOp(t, ws, "advertise").Channels {
			chans = append(chans, c.Topic+" "+c.Encoding)
		}
	}
	require.Equal(t, []string{"cam " + view.RawEncoding, "imu json"}, chans)

	subscribe(t, ws, 5, 2)
	send(t, ws, map[string]any{"op": "probe"})
	nextOp(t, ws, "status")
	s.Observe("imu", []byte(`not json`), time.Unix(0, 42))
	alt := nextOp(t, ws, "advertise").Channels
	require.Len(t, alt, 1)
	require.Equal(t, "imu "+view.RawEncoding, alt[0].Topic+" "+alt[0].Encoding)
	s.Observe("imu", []byte(`{"ax":2}`), time.Unix(0, 43))
	_, sub, ts, p := next(t, ws)
	require.Equal(t, []any{uint32(5), uint64(43), `{"ax":2}`}, []any{sub, ts, string(p)})
}

// TestSubprotocol: a WebSocket client that does not speak the protocol is
// refused.
func TestSubprotocol(t *testing.T) {
	t.Parallel()
	s := listen(t, view.Options{Anonymous: true})
	_, resp, err := websocket.DefaultDialer.Dial("ws://"+s.Addr().String()+"/", nil)
	require.True(t, errors.Is(err, websocket.ErrBadHandshake), "%v", err)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
}
