package robotexec_test

// End-to-end tests of the live view's bounds under robotexec run: a
// viewer that stops reading on a 1 kHz topic, and view.max_topics.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// The stalled viewer test's phases: the heartbeat measured without the
// viewer, then with it stalled.
const (
	stallBaseline = 5 * time.Second
	stallFor      = 15 * time.Second
)

// TestViewStalledViewer: robotexec run with view.listen bridges a 1 kHz
// topic of 4 KiB messages (fast/in to robot/fast) beside a heartbeat every
// 10 ms. A viewer subscribes to every channel, then stops reading for
// 15 s: about 120 MB of frames, far more than its send queue and the
// sockets hold. The process's RSS grows by less than 48 MiB (a leak would
// grow by the traffic, 8 MB/s: 120 MB), the viewer's drops are counted in
// robotexec_view_dropped_total, and the heartbeat keeps its timing: it
// beats at least 90% of its ticks (or of the rate it kept over the 5 s
// before, when the machine's load held it lower), its dispatch latency p99 over the stall
// is within 4 times what it was over 5 s before the viewer came (or
// 50 ms), and it misses at most twice the share of ticks it missed before
// (or 10%). A viewer that held the nodes up stops the heartbeat; the
// bounds are coarse because the test shares a loaded machine (a full
// suite made the heartbeat miss 4% of its ticks in either phase).
func TestViewStalledViewer(t *testing.T) {
	t.Parallel()
	viewPort := freePort(t)
	r := startPipeline(t, pipelineOptions{broker: "embedded", inProcess: true,
		extra: fmt.Sprintf("view: { listen: 127.0.0.1:%d }\n", viewPort),
		nodes: "" +
			"  - { name: relay, type: bridge, params: { from: fast/in, to: robot/fast } }\n" +
			"  - { name: heartbeat, type: heartbeat, params: { topic: robot/heartbeat, period: 10ms } }\n"})
	waitHealthy(t, r)
	stop := publishKHz(t, r.url, "fast/in", 4<<10)
	defer stop()

	time.Sleep(time.Second) // the traffic settles
	before := beatFigures(t, r)
	time.Sleep(stallBaseline)
	base := beatFigures(t, r).since(before)

	ws := dialStalled(t, viewPort, "robot/fast", "fast/in", "robot/heartbeat")
	defer ws.Close()
	time.Sleep(2 * time.Second) // the queue fills
	rss0 := rssOf(t, r.cmd.Process.Pid)
	before = beatFigures(t, r)
	time.Sleep(stallFor)
	stalled := beatFigures(t, r).since(before)
	rss1 := rssOf(t, r.cmd.Process.Pid)
	dropped := r.metric(t, fmt.Sprintf(`robotexec_view_dropped_total{connection="1",remote="%s"}`, ws.LocalAddr()))

	t.Logf("heartbeat p99 %v (%.0f beats, %.0f missed) before, %v (%.0f beats, %.0f missed) stalled; RSS %d -> %d MiB; %.0f frames dropped",
		base.p99, base.beats, base.missed, stalled.p99, stalled.beats, stalled.missed, rss0>>20, rss1>>20, dropped)
	require.Less(t, rss1-rss0, int64(48<<20), "RSS growth over the stall")
	require.Greater(t, dropped, 10000.0, "the stalled viewer's drops are counted")
	// 90% of the ticks, or of the rate the loaded machine gave before.
	rate := min(100, base.beats/stallBaseline.Seconds())
	require.Greater(t, stalled.beats, 0.9*stallFor.Seconds()*rate, "beats over the stall")
	require.LessOrEqual(t, stalled.p99, max(4*base.p99, 50*time.Millisecond), "heartbeat latency p99 with the viewer stalled")
	missedRate := func(f beatFigure) float64 { return f.missed / max(f.beats, 1) }
	require.LessOrEqual(t, missedRate(stalled), max(2*missedRate(base), 0.1), "missed ticks per beat")
}

// TestViewMaxTopics: with view.max_topics 2, each new topic past the
// bound unadvertises the least recently seen one, the viewer is told, and
// robotexec_view_evicted_total counts them; robotexec_view_channels stays
// within the bound.
func TestViewMaxTopics(t *testing.T) {
	t.Parallel()
	viewPort := freePort(t)
	r := startPipeline(t, pipelineOptions{broker: "embedded", inProcess: true,
		extra: fmt.Sprintf("view: { listen: 127.0.0.1:%d, max_topics: 2 }\n", viewPort),
		nodes: "  - { name: wd, type: watchdog, params: { watch: 'in/#', timeout: 1h, alarm: alarms } }\n"})
	waitHealthy(t, r)
	ws := dialView(t, viewPort)
	c := paho.NewClient(paho.NewClientOptions().AddBroker(r.url).SetClientID("topics-" + t.Name()).SetCleanSession(true))
	tok := c.Connect()
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "connect: %v", tok.Error())
	defer c.Disconnect(100)

	ids := map[uint32]string{}
	var gone []string
	for _, topic := range []string{"in/a", "in/b", "in/c", "in/d"} {
		tok := c.Publish(topic, 1, false, `{"v":1}`)
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
	require.Contains(t, gone, "in/a", "unadvertised: %v", gone)
	require.Contains(t, gone, "in/b", "unadvertised: %v", gone)
	require.GreaterOrEqual(t, r.metric(t, "robotexec_view_evicted_total"), 2.0)
	require.LessOrEqual(t, r.metric(t, "robotexec_view_channels"), 2.0)
}

// nextViewOp reads the live view's next advertise or unadvertise.
func nextViewOp(t *testing.T, ws *websocket.Conn) (m struct {
	Op       string
	Channels []struct {
		ID    uint32
		Topic string
	}
	ChannelIDs []uint32 `json:"channelIds"`
}) {
	t.Helper()
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(traffic)))
	for {
		typ, data, err := ws.ReadMessage()
		require.NoError(t, err)
		if typ == websocket.TextMessage && json.Unmarshal(data, &m) == nil && (m.Op == "advertise" || m.Op == "unadvertise") {
			return m
		}
	}
}

// waitHealthy waits until the run serves /healthz with 200.
func waitHealthy(t *testing.T, r *pipelineRun) {
	t.Helper()
	health := strings.TrimSuffix(r.metrics, "metrics") + "healthz"
	require.Eventually(t, func() bool {
		code, _ := getURLMaybe(health)
		return code == 200
	}, traffic, 20*time.Millisecond, "the run is healthy")
}

// getURLMaybe is getURL for a server that may not listen yet.
func getURLMaybe(url string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// publishKHz publishes a JSON payload of size bytes on topic every
// millisecond (QoS 0) from a client of its own, until the returned func is
// called.
func publishKHz(t *testing.T, url, topic string, size int) (stop func()) {
	t.Helper()
	c := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID("khz-" + t.Name()).SetCleanSession(true))
	tok := c.Connect()
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "connect: %v", tok.Error())
	payload := []byte(`{"v":1,"pad":"` + strings.Repeat("x", size-16) + `"}`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				c.Publish(topic, 0, false, payload)
			}
		}
	}()
	return func() {
		cancel()
		<-done
		c.Disconnect(100)
	}
}

// dialStalled connects a viewer to the live view on port, waits until the
// topics are advertised, subscribes to every channel advertised, and
// returns without ever reading again. Its socket's receive buffer is
// small, so that the server's writes stall soon.
func dialStalled(t *testing.T, port int, topics ...string) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"foxglove.websocket.v1"}, HandshakeTimeout: traffic,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err == nil {
				_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
			}
			return c, err
		}}
	ws, _, err := d.Dial(fmt.Sprintf("ws://127.0.0.1:%d/", port), nil)
	require.NoError(t, err)
	type sub struct {
		ID        uint32 `json:"id"`
		ChannelID uint32 `json:"channelId"`
	}
	var subs []sub
	seen := map[string]bool{}
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(traffic)))
	for len(seen) < len(topics) {
		typ, data, err := ws.ReadMessage()
		require.NoError(t, err, "advertised: %v", seen)
		var m struct {
			Op       string
			Channels []struct {
				ID    uint32
				Topic string
			}
		}
		if typ != websocket.TextMessage || json.Unmarshal(data, &m) != nil || m.Op != "advertise" {
			continue
		}
		for _, ch := range m.Channels {
			subs = append(subs, sub{ID: uint32(len(subs) + 1), ChannelID: ch.ID})
			for _, topic := range topics {
				seen[topic] = seen[topic] || ch.Topic == topic
			}
		}
	}
	require.NoError(t, ws.WriteJSON(map[string]any{"op": "subscribe", "subscriptions": subs}))
	return ws
}

// beatFigure is the heartbeat's figures in the metrics: beats run, ticks
// missed, and the dispatch latency histogram (cumulative, by bound).
type beatFigure struct {
	beats, missed float64
	bounds        []float64
	counts        []float64
	p99           time.Duration // set by since
}

var beatBucket = regexp.MustCompile(`(?m)^robotexec_dispatch_latency_seconds_bucket\{callback="beat",node="heartbeat",le="([^"]+)"\} (\S+)$`)

// beatFigures scrapes the heartbeat's figures.
func beatFigures(t *testing.T, r *pipelineRun) beatFigure {
	t.Helper()
	code, body := getURL(t, r.metrics)
	require.Equal(t, 200, code)
	var f beatFigure
	for _, m := range beatBucket.FindAllStringSubmatch(body, -1) {
		le, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		n, err := strconv.ParseFloat(m[2], 64)
		require.NoError(t, err)
		f.bounds, f.counts = append(f.bounds, le), append(f.counts, n)
	}
	require.NotEmpty(t, f.bounds, "the heartbeat's latency histogram in:\n%s", body)
	f.beats = r.metric(t, `robotexec_callback_duration_seconds_count{callback="beat",node="heartbeat"}`)
	f.missed = r.metric(t, `robotexec_timer_missed_ticks_total{callback="beat",node="heartbeat"}`)
	return f
}

// since returns the figures between b and f, with the latency p99: the
// upper bound of the bucket that holds it.
func (f beatFigure) since(b beatFigure) beatFigure {
	d := beatFigure{beats: f.beats - b.beats, missed: f.missed - b.missed, bounds: f.bounds}
	total := f.counts[len(f.counts)-1] - b.counts[len(b.counts)-1]
	for i := range f.counts {
		d.counts = append(d.counts, f.counts[i]-b.counts[i])
		if d.p99 == 0 && d.counts[i] >= 0.99*total {
			bound := f.bounds[i]
			if math.IsInf(bound, 1) {
				bound = 3600
			}
			d.p99 = time.Duration(bound * float64(time.Second))
		}
	}
	return d
}
