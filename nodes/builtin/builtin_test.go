package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/nodes/builtin"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/subscribers/mqtt"
	"github.com/robotexec/robotexec/subscribers/mqtt/broker"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// world is an embedded broker, a robotexec client running nodes, and an
// observer client collecting what they publish.
type world struct {
	t      *testing.T
	broker *broker.Broker
	ex     *executor.Executor
	env    *nodes.Env
	client *mqtt.Client
	obs    *mqtt.Client
	pub    *mqtt.Client
	obsEx  *executor.Executor
}

var idSeq sync.Mutex
var idN int

func dial(t *testing.T, url string) *mqtt.Client {
	t.Helper()
	idSeq.Lock()
	idN++
	id := fmt.Sprintf("builtin-test-%d-%d", time.Now().UnixNano(), idN)
	idSeq.Unlock()
	c, err := mqtt.Dial(mqtt.Config{Broker: url, ClientID: id, QoS: 1, CleanSession: true, StatusTopic: "-", Logger: quiet()})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.WaitConnected(ctx))
	t.Cleanup(func() { c.Close() })
	return c
}

func newWorld(t *testing.T) *world {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet()})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	w := &world{t: t, broker: b}
	w.client = dial(t, b.URL())
	w.obs = dial(t, b.URL())
	w.pub = dial(t, b.URL())
	w.ex = executor.New(executor.Options{Workers: 2, Logger: quiet()})
	w.obsEx = executor.New(executor.Options{Workers: 1, Logger: quiet()})
	w.env = &nodes.Env{Executor: w.ex, Router: w.client.Router(), Logger: quiet(), QoS: 1, Depth: 5000, Overflow: ptr(subscribers.Block)}
	return w
}

// build builds a node from YAML params.
func (w *world) build(name, typ, yamlParams string) *nodes.Node {
	w.t.Helper()
	n, err := nodes.Build(w.env, nodes.Spec{Name: name, Type: typ, Params: params(w.t, yamlParams)})
	require.NoError(w.t, err)
	return n
}

func params(t *testing.T, body string) config.Params {
	t.Helper()
	var b strings.Builder
	b.WriteString("nodes:\n  - name: n\n    type: t\n    params:\n")
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		b.WriteString("      " + line + "\n")
	}
	cfg, err := config.Parse("test.yaml", []byte(b.String()), nil)
	require.NoError(t, err)
	return cfg.Nodes[0].Params
}

// collect subscribes the observer to filter; messages arrive on the
// returned channel.
func (w *world) collect(filter string) <-chan subscribers.Message {
	w.t.Helper()
	ch := make(chan subscribers.Message, 10000)
	_, err := w.obsEx.NewOwner("observer", nil).Subscribe(w.obs, filter, func(m subscribers.Message) { ch <- m },
		executor.Depth(10000), executor.Overflow(subscribers.Block))
	require.NoError(w.t, err)
	return ch
}

// start runs both executors until the test ends.
func (w *world) start() {
	for _, ex := range []*executor.Executor{w.ex, w.obsEx} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { ex.Run(ctx); close(done) }()
		w.t.Cleanup(func() { cancel(); <-done })
	}
}

func (w *world) publish(topic string, payload string) {
	w.t.Helper()
	p, err := w.pub.Publisher(topic, 1, false)
	require.NoError(w.t, err)
	require.NoError(w.t, p.Publish([]byte(payload)))
}

func receive(t *testing.T, ch <-chan subscribers.Message, n int, within time.Duration) []subscribers.Message {
	t.Helper()
	var out []subscribers.Message
	deadline := time.After(within)
	for len(out) < n {
		select {
		case m := <-ch:
			out = append(out, m)
		case <-deadline:
			t.Fatalf("got %d of %d messages within %v", len(out), n, within)
		}
	}
	return out
}

// quietFor checks that nothing arrives on ch for d.
func quietFor(t *testing.T, ch <-chan subscribers.Message, d time.Duration) {
	t.Helper()
	select {
	case m := <-ch:
		t.Fatalf("unexpected message on %s: %s", m.Topic, m.Payload)
	case <-time.After(d):
	}
}

func TestBridgeKeepsOrderPerTopicUnderLoad(t *testing.T) {
	w := newWorld(t)
	w.build("bridge", "bridge", "from: sensors/+/raw\nto: robot/+/data")
	got := w.collect("robot/+/data")
	w.start()
	time.Sleep(0) // subscriptions are made before start returns
	const perTopic = 300
	topics := []string{"imu", "odom", "lidar"}
	var wg sync.WaitGroup
	for _, topic := range topics {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, _ := w.pub.Publisher("sensors/"+topic+"/raw", 1, false)
			for i := range perTopic {
				p.Publish([]byte(fmt.Sprintf(`{"seq":%d}`, i)))
			}
		}()
	}
	wg.Wait()
	msgs := receive(t, got, perTopic*len(topics), 30*time.Second)
	next := map[string]int{}
	for _, m := range msgs {
		var v struct{ Seq int }
		require.NoError(t, json.Unmarshal(m.Payload, &v))
		require.Equal(t, next[m.Topic], v.Seq, "order on %s", m.Topic)
		next[m.Topic]++
	}
	for _, topic := range topics {
		require.Equal(t, perTopic, next["robot/"+topic+"/data"])
	}
}

func TestBridgeMaxRateAndJSONCheck(t *testing.T) {
	w := newWorld(t)
	w.build("bridge", "bridge", "from: in/#\nto: out/#\nmax_rate: 1\njson: true")
	got := w.collect("out/#")
	w.start()
	// Twenty messages per topic in a burst: at 1 Hz one passes per topic.
	for i := range 20 {
		w.publish("in/a", fmt.Sprintf(`{"i":%d}`, i))
		w.publish("in/b/c", fmt.Sprintf(`{"i":%d}`, i))
	}
	msgs := receive(t, got, 2, 10*time.Second)
	topics := []string{msgs[0].Topic, msgs[1].Topic}
	require.ElementsMatch(t, []string{"out/a", "out/b/c"}, topics)
	for _, m := range msgs {
		require.JSONEq(t, `{"i":0}`, string(m.Payload))
	}
	quietFor(t, got, 300*time.Millisecond)
}

func TestBridgeDropsInvalidJSON(t *testing.T) {
	w := newWorld(t)
	w.build("bridge", "bridge", "from: in/+\nto: out/+\njson: true")
	got := w.collect("out/+")
	w.start()
	w.publish("in/x", "not json")
	w.publish("in/x", `{"ok":true}`)
	msgs := receive(t, got, 1, 10*time.Second)
	require.Equal(t, "out/x", msgs[0].Topic)
	require.JSONEq(t, `{"ok":true}`, string(msgs[0].Payload), "payload passes through unchanged")
	quietFor(t, got, 200*time.Millisecond)
}

func TestHeartbeatCadence(t *testing.T) {
	w := newWorld(t)
	w.build("hb", "heartbeat", "topic: robot/heartbeat\nperiod: 50ms")
	got := w.collect("robot/heartbeat")
	w.start()
	msgs := receive(t, got, 12, 10*time.Second)
	var first, last time.Time
	var firstSeq, lastSeq uint64
	for i, m := range msgs {
		var b builtin.Beat
		require.NoError(t, json.Unmarshal(m.Payload, &b))
		require.Equal(t, "hb", b.Node)
		at, err := time.Parse(time.RFC3339Nano, b.Time)
		require.NoError(t, err)
		if i == 0 {
			first, firstSeq = at, b.Seq
		} else {
			require.Equal(t, lastSeq+1, b.Seq, "no gaps")
		}
		last, lastSeq = at, b.Seq
	}
	require.Equal(t, uint64(1), firstSeq)
	// Drift-free deadlines: the mean period over the run is the period.
	mean := last.Sub(first) / time.Duration(lastSeq-firstSeq)
	require.InDelta(t, float64(50*time.Millisecond), float64(mean), float64(5*time.Millisecond))
}

func TestWatchdogTransitions(t *testing.T) {
	w := newWorld(t)
	w.build("wd", "watchdog", "watch: robot/+/data\ntimeout: 200ms\nalarm: robot/alarm")
	alarms := w.collect("robot/alarm")
	w.start()
	w.publish("robot/imu/data", "1")
	w.publish("robot/odom/data", "1")

	stale := receive(t, alarms, 2, 10*time.Second)
	var states []string
	for _, m := range stale {
		var a builtin.Alarm
		require.NoError(t, json.Unmarshal(m.Payload, &a))
		_, err := time.Parse(time.RFC3339Nano, a.LastSeen)
		require.NoError(t, err)
		states = append(states, a.Topic+" "+a.State)
	}
	require.ElementsMatch(t, []string{"robot/imu/data stale", "robot/odom/data stale"}, states)
	quietFor(t, alarms, 500*time.Millisecond) // stale once, not again

	w.publish("robot/imu/data", "2")
	ok := receive(t, alarms, 1, 10*time.Second)
	var a builtin.Alarm
	require.NoError(t, json.Unmarshal(ok[0].Payload, &a))
	require.Equal(t, "robot/imu/data", a.Topic)
	require.Equal(t, "ok", a.State)
	// And stale again after the timeout.
	again := receive(t, alarms, 1, 10*time.Second)
	require.NoError(t, json.Unmarshal(again[0].Payload, &a))
	require.Equal(t, "stale", a.State)
}

func TestTopicMapping(t *testing.T) {
	tests := []struct{ from, to, topic, want string }{
		{"sensors/+/raw", "robot/+/data", "sensors/imu/raw", "robot/imu/data"},
		{"a/+/b/+", "x/+/+", "a/1/b/2", "x/1/2"},
		{"a/+/b/+", "x/+", "a/1/b/2", "x/1"},
		{"in/#", "out/#", "in/a/b/c", "out/a/b/c"},
		{"in/#", "out/#", "in", "out"},
		{"a/b", "c/d", "a/b", "c/d"},
		{"$share/workers/sensors/+/raw", "robot/+/data", "sensors/imu/raw", "robot/imu/data"},
	}
	for _, tc := range tests {
		got, ok, err := builtin.MapTopic(tc.from, tc.to, tc.topic)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, tc.want, got, "%s → %s on %s", tc.from, tc.to, tc.topic)
	}
	_, _, err := builtin.MapTopic("a/+", "b/+/+", "a/x")
	require.ErrorContains(t, err, "2 wildcards")
}

func TestParamErrors(t *testing.T) {
	ex := executor.New(executor.Options{Logger: quiet()})
	env := &nodes.Env{Executor: ex, Router: new(subscribers.Router), Logger: quiet()}
	tests := []struct{ typ, params, want string }{
		{"bridge", "to: x", "from is required"},
		{"bridge", "from: x", "to is required"},
		{"bridge", "from: a/#/b\nto: x", `"a/#/b"`},
		{"bridge", "from: a\nto: b\nmax_rate: -1", "max_rate -1 is negative"},
		{"bridge", "from: a\nto: b\nqos: 3", "qos 3 is not 0, 1 or 2"},
		{"bridge", "from: a\nto: b\nrate: 3", "unknown key"},
		{"bridge", "from: robot/#\nto: robot/in/#", `to "robot/in/#" can match from "robot/#"`},
		{"bridge", "from: $share/g/+/x\nto: x/+", `to "x/+" can match from "$share/g/+/x"`},
		{"bridge", "from: a/b\nto: a/b", "forward its own output"},
		{"heartbeat", "period: 1s", "topic is required"},
		{"heartbeat", "topic: t\nperiod: -1s", "not positive"},
		{"heartbeat", "topic: t\nperiod: soon", `"soon" is not a duration`},
		{"watchdog", "alarm: a\ntimeout: 1s", "watch is required"},
		{"watchdog", "watch: a\ntimeout: 1s", "alarm is required"},
		{"watchdog", "watch: a\nalarm: b", "timeout 0s is not positive"},
		{"watchdog", "watch: a\nalarm: b\ntimeout: 1s\nmax_topics: -1", "max_topics -1 is negative"},
		{"bridge", "from: a\nto: b\nmax_topics: -5", "max_topics -5 is negative"},
	}
	for _, tc := range tests {
		_, err := nodes.Build(env, nodes.Spec{Name: "n", Type: tc.typ, Params: params(t, tc.params)})
		require.ErrorContains(t, err, tc.want, "%s with %q", tc.typ, tc.params)
	}
}

func ptr[T any](v T) *T { return &v }
