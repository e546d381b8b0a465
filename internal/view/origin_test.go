package view_test

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/syncbuf"
	"github.com/robotexec/robotexec/internal/view"
)

// dialFrom connects a viewer whose upgrade carries the headers h, as a
// browser's would, to s; it returns the upgrade's HTTP status.
func dialFrom(t *testing.T, s *view.Server, h http.Header) int {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{view.Subprotocol}, HandshakeTimeout: wait}
	ws, resp, err := d.Dial("ws://"+s.Addr().String()+"/", h)
	if err == nil {
		ws.Close()
	}
	require.NotNil(t, resp, "%v", err)
	return resp.StatusCode
}

// TestOrigins: an upgrade without Origin (not a browser), from the
// server's own page (the address the browser reached it at, an IP
// address or localhost) or from an origin of AllowedOrigins is accepted;
// any other origin, a name that could be rebound to this server
// included, is refused with 403 whatever the credentials, counted, and
// logged once per ten seconds.
func TestOrigins(t *testing.T) {
	t.Parallel()
	var logs syncbuf.Buffer
	s := listen(t, view.Options{
		Users:          []view.User{{Username: "ops", Password: "pw", Read: []string{"#"}}},
		Anonymous:      true,
		AllowedOrigins: []string{"https://app.foxglove.dev"},
		Logger:         slog.New(slog.NewTextHandler(&logs, nil)),
	})
	own := s.Addr().String()
	_, port, _ := strings.Cut(own, ":")
	ops := "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:pw"))
	start := time.Now()
	for _, tc := range []struct {
		name string
		h    http.Header
		want int
	}{
		{"no origin", http.Header{}, http.StatusSwitchingProtocols},
		{"own page", http.Header{"Origin": {"http://" + own}}, http.StatusSwitchingProtocols},
		{"own page through localhost", http.Header{"Origin": {"http://localhost:" + port}, "Host": {"localhost:" + port}}, http.StatusSwitchingProtocols},
		{"own page through a forwarded port", http.Header{"Origin": {"http://127.0.0.1:9000"}, "Host": {"127.0.0.1:9000"}}, http.StatusSwitchingProtocols},
		{"allowed", http.Header{"Origin": {"https://app.foxglove.dev"}}, http.StatusSwitchingProtocols},
		{"foreign", http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"foreign with credentials", http.Header{"Origin": {"https://evil.example"}, "Authorization": {ops}}, http.StatusForbidden},
		{"another port", http.Header{"Origin": {"http://127.0.0.1:1"}}, http.StatusForbidden},
		{"https of the allowed", http.Header{"Origin": {"http://app.foxglove.dev"}}, http.StatusForbidden},
		{"rebound name", http.Header{"Origin": {"http://rebound.example:" + port}, "Host": {"rebound.example:" + port}}, http.StatusForbidden},
		{"null", http.Header{"Origin": {"null"}}, http.StatusForbidden},
		{"two origins", http.Header{"Origin": {"http://" + own, "https://evil.example"}}, http.StatusForbidden},
	} {
		require.Equal(t, tc.want, dialFrom(t, s, tc.h), tc.name)
	}
	require.Equal(t, uint64(7), s.Stats().Refused[view.RefusedOrigin])
	require.Equal(t, uint64(0), s.Stats().Refused[view.RefusedUnauthorized])
	// One line per ten seconds: the seven refusals take milliseconds.
	lines := strings.Count(logs.String(), "foreign origin")
	require.True(t, lines >= 1 && lines <= 1+int(time.Since(start)/(10*time.Second)), "rate-limited: %s", logs.String())
	require.Contains(t, logs.String(), "origin=https://evil.example")
}

// TestRefusedUnauthorized: with users only, an upgrade without valid
// credentials is 401 and counted; the page's own requests are not.
func TestRefusedUnauthorized(t *testing.T) {
	t.Parallel()
	s := listen(t, view.Options{Users: []view.User{{Username: "ops", Password: "pw", Read: []string{"#"}}}})
	require.Equal(t, http.StatusUnauthorized, dialFrom(t, s, http.Header{}))
	code, _, _ := getPage(t, s, "/", "", "")
	require.Equal(t, http.StatusUnauthorized, code)
	require.Equal(t, map[string]uint64{view.RefusedOrigin: 0, view.RefusedUnauthorized: 1}, s.Stats().Refused)
}

// TestAnonymousPublish: an anonymous viewer is not offered clientPublish
// and its advertisement is refused with a status saying why, so nothing
// it sends is published, unless AnonymousPublish lets it publish.
func TestAnonymousPublish(t *testing.T) {
	t.Parallel()
	for _, allowed := range []bool{false, true} {
		t.Run(fmt.Sprint(allowed), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var published []string
			s := listen(t, view.Options{Anonymous: true, AnonymousPublish: allowed,
				Publish: func(topic string, payload []byte) error {
					mu.Lock()
					defer mu.Unlock()
					published = append(published, topic+" "+string(payload))
					return nil
				}})
			ws, _, err := dial(t, s, "", "")
			require.NoError(t, err)
			caps := nextOp(t, ws, "serverInfo").Capabilities
			send(t, ws, map[string]any{"op": "advertise", "channels": []map[string]any{
				{"id": 1, "topic": "cmd/go", "encoding": "json", "schemaName": ""}}})
			msg := binary.LittleEndian.AppendUint32([]byte{1}, 1)
			require.NoError(t, ws.WriteMessage(websocket.BinaryMessage, append(msg, `{"v":1}`...)))
			if !allowed {
				require.NotContains(t, caps, "clientPublish")
				require.Equal(t, "advertise 1 (cmd/go): anonymous viewers may not publish: connect as a user whose write filters match the topic, or let them publish with view.anonymous_publish: true",
					nextOp(t, ws, "status").Message)
				require.Equal(t, "message on channel 1, which this viewer did not advertise", nextOp(t, ws, "status").Message)
				mu.Lock()
				defer mu.Unlock()
				require.Empty(t, published)
				return
			}
			require.Contains(t, caps, "clientPublish")
			send(t, ws, map[string]any{"op": "probe"}) // answered once the publication was handled
			require.Equal(t, `op "probe" is not supported`, nextOp(t, ws, "status").Message)
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, []string{`cmd/go {"v":1}`}, published)
		})
	}
}
