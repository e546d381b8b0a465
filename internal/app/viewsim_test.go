package app

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/internal/view"
)

// simViewer is a foxglove.websocket.v1 client of the live view that
// subscribes to every channel advertised.
type simViewer struct {
	ws     *websocket.Conn
	topics map[uint32]string // by subscription id, which is the channel's id
	seen   map[string]bool   // the topics a message came on: subscribed
}

// viewEvent is a message of the server: a Time message, or a message of a
// subscribed channel.
type viewEvent struct {
	time    bool
	topic   string
	stamp   int64
	payload string
}

// next returns the next Time or Message Data message, subscribing to the
// channels advertised meanwhile.
func (v *simViewer) next(t *testing.T) viewEvent {
	t.Helper()
	for {
		require.NoError(t, v.ws.SetReadDeadline(time.Now().Add(waitBound)))
		typ, data, err := v.ws.ReadMessage()
		require.NoError(t, err)
		if typ == websocket.BinaryMessage {
			switch data[0] {
			case 0x02:
				return viewEvent{time: true, stamp: int64(binary.LittleEndian.Uint64(data[1:]))}
			case 0x01:
				sub := binary.LittleEndian.Uint32(data[1:])
				v.seen[v.topics[sub]] = true
				return viewEvent{topic: v.topics[sub], stamp: int64(binary.LittleEndian.Uint64(data[5:])), payload: string(data[13:])}
			}
			continue
		}
		var m struct {
			Op       string
			Channels []struct {
				ID    uint32
				Topic string
			}
		}
		require.NoError(t, json.Unmarshal(data, &m))
		if m.Op != "advertise" {
			continue
		}
		var subs []map[string]uint32
		for _, ch := range m.Channels {
			v.topics[ch.ID] = ch.Topic
			subs = append(subs, map[string]uint32{"id": ch.ID, "channelId": ch.ID})
		}
		require.NoError(t, v.ws.WriteJSON(map[string]any{"op": "subscribe", "subscriptions": subs}))
	}
}

// await returns the first event that want accepts.
func (v *simViewer) await(t *testing.T, what string, want func(viewEvent) bool) viewEvent {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for time.Now().Before(deadline) {
		if e := v.next(t); want(e) {
			return e
		}
	}
	t.Fatalf("the viewer did not get %s", what)
	return viewEvent{}
}

// TestViewSimTime: with use_sim_time the live view has the time
// capability, sends the executor's time as the clock topic moves it, and
// stamps the inputs and the nodes' publications with it.
func TestViewSimTime(t *testing.T) {
	t.Parallel()
	b := mqtttest.Embedded(t, broker.Config{})
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	cfg := loadConfig(t, fmt.Sprintf(`executor: { workers: 2, use_sim_time: true, clock_topic: sim/clock }
mqtt: { broker: %s, client_id: app-viewsim, qos: 1, clean_session: true }
view: { listen: '127.0.0.1:0' }
nodes:
  - { name: relay, type: bridge, params: { from: in/x, to: out/x } }
`, b.URL()))
	w := connectPaho(t, b.URL(), "app-viewsim-watch")
	w.publish(t, "sim/clock", clockPayload(t0), true)
	a := startApp(t, cfg, discardLogger(), Options{})
	ws, _, err := (&websocket.Dialer{Subprotocols: []string{view.Subprotocol}}).Dial("ws://"+a.view.Addr().String()+"/", nil)
	require.NoError(t, err)
	defer ws.Close()
	var info struct {
		Op, Name     string
		Capabilities []string
	}
	require.NoError(t, ws.ReadJSON(&info))
	require.Equal(t, "serverInfo", info.Op)
	require.Contains(t, info.Capabilities, "time")
	v := &simViewer{ws: ws, topics: map[uint32]string{}, seen: map[string]bool{}}
	require.Equal(t, t0.UnixNano(), v.await(t, "the time", func(e viewEvent) bool { return e.time }).stamp)

	checked := 0
	for i := 1; checked < 3; i++ {
		require.LessOrEqual(t, i, 20, "the viewer had messages of %v only", v.seen)
		ti := t0.Add(time.Duration(i) * time.Second)
		w.publish(t, "sim/clock", clockPayload(ti), false)
		v.await(t, fmt.Sprint("time ", ti), func(e viewEvent) bool { return e.time && e.stamp == ti.UnixNano() })
		payload := fmt.Sprint(i)
		subscribed := v.seen["in/x"] && v.seen["out/x"]
		w.publish(t, "in/x", payload, false)
		if !subscribed {
			// The channels are made by their first messages; the
			// viewer subscribes once they are advertised, and its
			// subscription holds once a message came on it.
			continue
		}
		checked++
		got := map[string]int64{}
		v.await(t, "in/x and out/x "+payload, func(e viewEvent) bool {
			if !e.time && e.payload == payload {
				got[e.topic] = e.stamp
			}
			return len(got) == 2
		})
		require.Equal(t, map[string]int64{"in/x": ti.UnixNano(), "out/x": ti.UnixNano()}, got, "stamped with the executor's time")
	}
}
