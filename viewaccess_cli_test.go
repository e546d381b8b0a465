package robotexec_test

// End-to-end tests of who may drive the live view of robotexec run: the
// web pages whose origin it accepts, and the viewers that may publish.

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// viewMsg is a JSON message of the live view, the fields these tests read.
type viewMsg struct {
	Op           string
	Capabilities []string
	Level        int
	Message      string
}

// dialViewWith upgrades to the live view on port with the headers h (an
// Origin, credentials), as a browser or a viewer would; it returns the
// upgrade's HTTP status and, when it was accepted, the connection, which
// the test's end closes.
func dialViewWith(t *testing.T, port int, h http.Header) (int, *websocket.Conn) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"foxglove.websocket.v1"}, HandshakeTimeout: traffic}
	ws, resp, err := d.Dial(fmt.Sprintf("ws://127.0.0.1:%d/", port), h)
	require.NotNil(t, resp, "%v", err)
	if err != nil {
		return resp.StatusCode, nil
	}
	t.Cleanup(func() { ws.Close() })
	return resp.StatusCode, ws
}

// basicAuth is the header of a viewer that authenticates as user.
func basicAuth(user, password string) http.Header {
	return http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))}}
}

// nextViewMsg reads the live view's messages up to the next JSON one of op.
func nextViewMsg(t *testing.T, ws *websocket.Conn, op string) viewMsg {
	t.Helper()
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(traffic)))
	for {
		typ, data, err := ws.ReadMessage()
		require.NoError(t, err, "waiting for %s", op)
		var m viewMsg
		if typ == websocket.TextMessage && json.Unmarshal(data, &m) == nil && m.Op == op {
			return m
		}
	}
}

// advertiseAndPublish advertises a channel id of the viewer's on topic
// and publishes payload on it (Client Message Data).
func advertiseAndPublish(t *testing.T, ws *websocket.Conn, id uint32, topic, payload string) {
	t.Helper()
	require.NoError(t, ws.WriteJSON(map[string]any{"op": "advertise", "channels": []map[string]any{
		{"id": id, "topic": topic, "encoding": "json", "schemaName": ""}}}))
	msg := binary.LittleEndian.AppendUint32([]byte{1}, id)
	require.NoError(t, ws.WriteMessage(websocket.BinaryMessage, append(msg, payload...)))
}

// TestViewOrigins: robotexec run with view.allowed_origins refuses, with
// 403 before the upgrade, a WebSocket from a web page of any other origin
// than the view's own page (http://127.0.0.1:PORT) and those listed,
// counts each in robotexec_view_refused_total{reason="origin"} and logs
// it; a client without Origin (not a browser), the view's own page and a
// listed origin connect.
func TestViewOrigins(t *testing.T) {
	t.Parallel()
	viewPort := freePort(t)
	r := startPipeline(t, pipelineOptions{broker: "embedded", inProcess: true,
		extra: fmt.Sprintf("view:\n  listen: 127.0.0.1:%d\n  allowed_origins: ['https://app.foxglove.dev']\n", viewPort),
		nodes: "  - { name: beat, type: heartbeat, params: { topic: robot/hb, period: 1s } }\n"})
	waitHealthy(t, r)

	foreign := []string{"https://evil.example", fmt.Sprintf("http://127.0.0.1:%d", viewPort+1), "null", fmt.Sprintf("http://rebound.example:%d", viewPort)}
	for _, origin := range foreign {
		code, _ := dialViewWith(t, viewPort, http.Header{"Origin": {origin}})
		require.Equal(t, http.StatusForbidden, code, origin)
	}
	require.Equal(t, float64(len(foreign)), r.metric(t, `robotexec_view_refused_total{reason="origin"}`))
	line := r.stderr.waitFor(t, traffic, "refused a viewer")
	require.Contains(t, line, "origin=https://evil.example")

	for _, h := range []http.Header{
		{},
		{"Origin": {fmt.Sprintf("http://127.0.0.1:%d", viewPort)}},
		{"Origin": {"https://app.foxglove.dev"}},
	} {
		code, ws := dialViewWith(t, viewPort, h)
		require.Equal(t, http.StatusSwitchingProtocols, code, "%v", h)
		nextViewMsg(t, ws, "serverInfo")
	}
	require.Equal(t, float64(len(foreign)), r.metric(t, `robotexec_view_refused_total{reason="origin"}`))
}

// TestViewPublishAccess: in robotexec run, an anonymous viewer is not
// offered clientPublish, and its advertisement is refused with an error
// status saying so, so what it sends reaches nothing; a user of
// view.users publishes on the topics of its write filters (the demo's
// bridge passes the message on, to the broker), and is refused, with a
// status, elsewhere.
func TestViewPublishAccess(t *testing.T) {
	t.Parallel()
	viewPort := freePort(t)
	r := startPipeline(t, pipelineOptions{broker: "embedded", inProcess: true,
		extra: fmt.Sprintf("view:\n  listen: 127.0.0.1:%d\n  allow_anonymous: true\n"+
			"  users: [{ username: ops, password: pw, read: ['#'], write: ['sensors/#'] }]\n", viewPort),
		nodes: "  - { name: bridge, type: bridge, params: { from: sensors/+/raw, to: robot/+/data } }\n"})
	waitHealthy(t, r)
	got := subscribeBroker(t, r.url, "robot/panel/data")

	_, anon := dialViewWith(t, viewPort, nil)
	require.NotContains(t, nextViewMsg(t, anon, "serverInfo").Capabilities, "clientPublish")
	advertiseAndPublish(t, anon, 1, "sensors/panel/raw", `{"from":"anonymous"}`)
	st := nextViewMsg(t, anon, "status")
	require.Equal(t, 2, st.Level, "an error")
	require.Equal(t, "advertise 1 (sensors/panel/raw): anonymous viewers may not publish: connect as a user whose write filters match the topic, or let them publish with view.anonymous_publish: true", st.Message)
	require.Equal(t, "message on channel 1, which this viewer did not advertise", nextViewMsg(t, anon, "status").Message)

	_, ops := dialViewWith(t, viewPort, basicAuth("ops", "pw"))
	require.Contains(t, nextViewMsg(t, ops, "serverInfo").Capabilities, "clientPublish")
	advertiseAndPublish(t, ops, 2, "robot/cmd", `{"from":"ops"}`)
	require.Equal(t, "advertise 2 (robot/cmd): not authorized to publish on robot/cmd", nextViewMsg(t, ops, "status").Message)
	advertiseAndPublish(t, ops, 3, "sensors/panel/raw", `{"from":"ops"}`)
	select {
	case m := <-got:
		require.Equal(t, `{"from":"ops"}`, m, "the anonymous viewer's message went nowhere")
	case <-time.After(traffic):
		t.Fatal("the user's publication did not come through the bridge")
	}
}

// subscribeBroker subscribes a client of its own to topic on the broker
// at url (QoS 1) and returns the payloads it receives.
func subscribeBroker(t *testing.T, url, topic string) <-chan string {
	t.Helper()
	c := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID("sub-" + t.Name()).SetCleanSession(true))
	tok := c.Connect()
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "connect: %v", tok.Error())
	t.Cleanup(func() { c.Disconnect(100) })
	got := make(chan string, 16)
	tok = c.Subscribe(topic, 1, func(_ paho.Client, m paho.Message) {
		select {
		case got <- string(m.Payload()):
		default:
		}
	})
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "subscribe: %v", tok.Error())
	return got
}
