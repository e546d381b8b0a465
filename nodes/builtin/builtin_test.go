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

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/nodes/builtin"
	"github.com/robotexec/robotexec/subscribers"
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
	n, err := nodes.Build(context.Background(), w.env, nodes.Spec{Name: name, Type: typ, Params: params(w.t, yamlParams)})
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
	_, err := w.obsEx.NewOwner("observer", nil).Subscribe(w.obs, filter, func(ctx context.Context, m subscribers.Message) { ch <- m },
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
			p, _ := w.pub.Publisher("sensors/"+topic+"/raw", bus.WithQoS(1))
			for i := range perTopic {
				p.Publish(context.Background(), []byte(fmt.Sprintf(`{"seq":%d}`, i)))
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

func ptr[T any](v T) *T { return &v }
