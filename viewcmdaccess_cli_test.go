package robotexec_test

// End-to-end tests of robotexec view's settings: who may drive it (web
// origins, anonymous publishing), its bound on the topics shown with its
// metrics, and its time under a clock topic.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// startView starts robotexec view with args and waits until it serves.
func startView(t *testing.T, args ...string) *proc {
	t.Helper()
	v := startProc(t, robotexecBin, nil, append([]string{"view"}, args...)...)
	v.stderr.waitFor(t, startup, "serving the live view")
	t.Cleanup(func() {
		if !v.hasExited() {
			v.signal(t, os.Interrupt)
			v.wait(t, stopWithin)
		}
	})
	return v
}

// pahoClient connects a client of its own to the broker at url.
func pahoClient(t *testing.T, url, id string) paho.Client {
	t.Helper()
	c := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID(id).SetCleanSession(true))
	tok := c.Connect()
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "connect: %v", tok.Error())
	t.Cleanup(func() { c.Disconnect(100) })
	return c
}

// TestViewCommandConfig: robotexec view -config takes the config's view
// section and metrics.listen: a foreign web origin is refused (403) and
// counted in robotexec_view_refused_total, the view's own page and an
// allowed origin connect, an anonymous viewer may not publish, and past
// view.max_topics the least recently seen topics are unadvertised and
// counted in robotexec_view_evicted_total. The flags -allowed-origins
// and -anonymous-publish win over the config: the origin listed there
// connects and an anonymous viewer's message reaches the broker.
func TestViewCommandConfig(t *testing.T) {
	t.Parallel()
	b := mqtttest.Embedded(t, broker.Config{})
	viewPort, metricsPort := freePort(t), freePort(t)
	cfg := filepath.Join(t.TempDir(), "view.yaml")
	writeFile(t, cfg, fmt.Sprintf("view:\n  listen: 127.0.0.1:%d\n  max_topics: 2\n  allowed_origins: [https://app.foxglove.dev]\n"+
		"metrics:\n  listen: 127.0.0.1:%d\n", viewPort, metricsPort))
	startView(t, "-config", cfg, "-broker", b.URL(), "in/#")
	run := &pipelineRun{metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)}

	code, _ := dialViewWith(t, viewPort, http.Header{"Origin": {"https://evil.example"}})
	require.Equal(t, http.StatusForbidden, code)
	for _, origin := range []string{fmt.Sprintf("http://127.0.0.1:%d", viewPort), "https://app.foxglove.dev"} {
		code, _ := dialViewWith(t, viewPort, http.Header{"Origin": {origin}})
		require.Equal(t, http.StatusSwitchingProtocols, code, origin)
	}
	require.Equal(t, 1.0, run.metric(t, `robotexec_view_refused_total{reason="origin"}`))

	_, ws := dialViewWith(t, viewPort, nil)
	require.NotContains(t, nextViewMsg(t, ws, "serverInfo").Capabilities, "clientPublish")
	advertiseAndPublish(t, ws, 1, "in/cmd", `{"v":1}`)
	require.Contains(t, nextViewMsg(t, ws, "status").Message, "anonymous viewers may not publish")

	pub := pahoClient(t, b.URL(), "pub-"+t.Name())
	ids := map[uint32]string{}
	var gone []string
	for _, topic := range []string{"in/a", "in/b", "in/c", "in/d"} {
		tok := pub.Publish(topic, 1, false, `{"v":1}`)
		require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "publish: %v", tok.Error())
		for advertised := false; !advertised; {
			m := nextViewOp(t, ws)
			for _, ch := range m.Channels {
				ids[ch.ID] = ch.Topic
				advertised = advertised || ch.Topic == topic
			}
			for _, id := range m.ChannelIDs {
				gone = append(gone, ids[id])
			}
		}
	}
	require.Subset(t, gone, []string{"in/a", "in/b"})
	require.GreaterOrEqual(t, run.metric(t, "robotexec_view_evicted_total"), 2.0)
	require.LessOrEqual(t, run.metric(t, "robotexec_view_channels"), 2.0)

	// The flags win over the config.
	port2 := freePort(t)
	cfg2 := filepath.Join(t.TempDir(), "view2.yaml")
	writeFile(t, cfg2, "view:\n  listen: 127.0.0.1:8765\n  allowed_origins: [https://app.foxglove.dev]\n")
	startView(t, "-config", cfg2, "-broker", b.URL(), "-listen", fmt.Sprintf("127.0.0.1:%d", port2),
		"-allowed-origins", "https://lichtblick.example,http://localhost:3000", "-anonymous-publish", "in/#")
	code, _ = dialViewWith(t, port2, http.Header{"Origin": {"https://app.foxglove.dev"}})
	require.Equal(t, http.StatusForbidden, code, "-allowed-origins replaces the config's")
	code, ws = dialViewWith(t, port2, http.Header{"Origin": {"http://localhost:3000"}})
	require.Equal(t, http.StatusSwitchingProtocols, code)
	require.Contains(t, nextViewMsg(t, ws, "serverInfo").Capabilities, "clientPublish")
	got := subscribeBroker(t, b.URL(), "in/cmd")
	advertiseAndPublish(t, ws, 1, "in/cmd", `{"anonymous":true}`)
	select {
	case m := <-got:
		require.Equal(t, `{"anonymous":true}`, m)
	case <-time.After(traffic):
		t.Fatal("the anonymous viewer's publication did not reach the broker")
	}
}

// TestViewCommandBadSettings: robotexec view exits 2 on a bad
// -allowed-origins, -clock-topic or -anonymous-publish where anonymous
// viewers are not let in.
func TestViewCommandBadSettings(t *testing.T) {
	t.Parallel()
	dead := brokerURL(freePort(t))
	users := filepath.Join(t.TempDir(), "users.yaml")
	writeFile(t, users, "view:\n  listen: 127.0.0.1:8765\n  users: [{username: ops, password: pw}]\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"origin with a path", []string{"-allowed-origins", "https://app.foxglove.dev/x"}, `-allowed-origins: "https://app.foxglove.dev/x" is not an origin`},
		{"any origin", []string{"-allowed-origins", "*"}, `-allowed-origins: "*" would let any page in`},
		{"clock topic", []string{"-clock", "-clock-topic", "a/#"}, "-clock-topic:"},
		{"anonymous publish", []string{"-config", users, "-anonymous-publish"}, "-anonymous-publish: anonymous viewers are not let in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runCmd(t, quickExit, robotexecBin, nil, append([]string{"view", "-broker", dead, "-listen", "127.0.0.1:0"}, tc.args...)...)
			require.Equal(t, 2, r.code, "%s", r)
			require.Contains(t, r.stderr, tc.want, "%s", r)
		})
	}
}

// TestViewCommandClock: robotexec view -clock (or -config's
// executor.use_sim_time) offers the time capability: each message of the
// clock topic, {"time": RFC3339Nano}, is a Time message to the viewer, a
// clock that goes back included, and the messages shown are stamped with
// the clock's time. Without it there is no time capability.
func TestViewCommandClock(t *testing.T) {
	t.Parallel()
	b := mqtttest.Embedded(t, broker.Config{})
	simCfg := filepath.Join(t.TempDir(), "sim.yaml")
	writeFile(t, simCfg, "executor:\n  use_sim_time: true\n  clock_topic: sim/clock\n")
	pub := pahoClient(t, b.URL(), "pub-"+t.Name())
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"flag", []string{"-clock", "-clock-topic", "sim/clock"}},
		{"config", []string{"-config", simCfg}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := freePort(t)
			startView(t, append(tc.args, "-broker", b.URL(), "-listen", fmt.Sprintf("127.0.0.1:%d", port), "robot/#")...)
			_, ws := dialViewWith(t, port, nil)
			require.Contains(t, nextViewMsg(t, ws, "serverInfo").Capabilities, "time")
			v := newClockViewer(t, ws, pub)
			t1 := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
			v.awaitTime(t1)
			require.Equal(t, t1.UnixNano(), v.awaitMessage("robot/x", `{"v":1}`), "stamped with the clock's time")
			t0 := t1.Add(-time.Hour)
			v.awaitTime(t0)
			require.Equal(t, t0.UnixNano(), v.awaitMessage("robot/x", `{"v":2}`), "the clock went back")
		})
	}
	port := freePort(t)
	startView(t, "-broker", b.URL(), "-listen", fmt.Sprintf("127.0.0.1:%d", port))
	_, ws := dialViewWith(t, port, nil)
	require.NotContains(t, nextViewMsg(t, ws, "serverInfo").Capabilities, "time", "without -clock")
}

// clockViewer is a viewer of robotexec view that publishes on the broker
// until it sees what it waits for: robotexec view subscribes after it
// serves, so a single message may come before its subscription.
type clockViewer struct {
	t      *testing.T
	pub    paho.Client
	events chan viewEvent // from the reader goroutine, which ends with an error
}

// viewEvent is a Time message (topic "") or a Message Data of the
// viewer, or the error that ended its reading.
type viewEvent struct {
	topic   string
	stamp   int64
	payload string
	err     error
}

// newClockViewer reads ws on a goroutine of its own until the test ends,
// subscribing to each channel advertised.
func newClockViewer(t *testing.T, ws *websocket.Conn, pub paho.Client) *clockViewer {
	v := &clockViewer{t: t, pub: pub, events: make(chan viewEvent, 64)}
	done := make(chan struct{})
	t.Cleanup(func() { close(done) }) // before ws is closed
	emit := func(e viewEvent) bool {
		select {
		case v.events <- e:
			return true
		case <-done:
			return false
		}
	}
	go func() {
		subs := map[uint32]string{} // subscription id (the channel's id) → topic
		for {
			typ, data, err := ws.ReadMessage()
			if err != nil {
				emit(viewEvent{err: err})
				return
			}
			ok := true
			switch {
			case typ == websocket.BinaryMessage && data[0] == 0x02:
				ok = emit(viewEvent{stamp: int64(binary.LittleEndian.Uint64(data[1:]))})
			case typ == websocket.BinaryMessage && data[0] == 0x01:
				ok = emit(viewEvent{topic: subs[binary.LittleEndian.Uint32(data[1:])], stamp: int64(binary.LittleEndian.Uint64(data[5:])), payload: string(data[13:])})
			case typ == websocket.TextMessage:
				var m struct {
					Op       string
					Channels []struct {
						ID    uint32
						Topic string
					}
				}
				if json.Unmarshal(data, &m) != nil || m.Op != "advertise" {
					continue
				}
				var req []map[string]uint32
				for _, ch := range m.Channels {
					subs[ch.ID] = ch.Topic
					req = append(req, map[string]uint32{"id": ch.ID, "channelId": ch.ID})
				}
				if err := ws.WriteJSON(map[string]any{"op": "subscribe", "subscriptions": req}); err != nil {
					emit(viewEvent{err: err})
					return
				}
			}
			if !ok {
				return
			}
		}
	}()
	return v
}

// awaitTime publishes at on the clock topic until the viewer gets it as
// a Time message.
func (v *clockViewer) awaitTime(at time.Time) {
	v.t.Helper()
	payload := fmt.Sprintf(`{"time":%q}`, at.Format(time.RFC3339Nano))
	v.until(func() { v.pub.Publish("sim/clock", 0, false, payload) }, func(e viewEvent) bool {
		return e.topic == "" && e.stamp == at.UnixNano()
	})
}

// awaitMessage publishes payload on topic until the viewer gets it, and
// returns its stamp.
func (v *clockViewer) awaitMessage(topic, payload string) int64 {
	v.t.Helper()
	var stamp int64
	v.until(func() { v.pub.Publish(topic, 0, false, payload) }, func(e viewEvent) bool {
		stamp = e.stamp
		return e.topic == topic && e.payload == payload
	})
	return stamp
}

// until calls send every 100 ms until done accepts an event of the
// viewer, for traffic at most.
func (v *clockViewer) until(send func(), done func(viewEvent) bool) {
	v.t.Helper()
	deadline := time.After(traffic)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for send(); ; {
		select {
		case e := <-v.events:
			require.NoError(v.t, e.err)
			if done(e) {
				return
			}
		case <-tick.C:
			send()
		case <-deadline:
			v.t.Fatalf("not seen within %v", traffic)
		}
	}
}
