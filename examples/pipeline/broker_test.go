package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec"
	"github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/subscribers/mqtt"
	"github.com/robotexec/robotexec/subscribers/mqtt/broker"
)

// The pipeline of examples/pipeline.yaml, shortened, in a running
// robotexec on a real broker: a heartbeat at 1 kHz through three stages,
// one of them slow, with the block policy. Another client sees every seq
// of the last stage in order, and the sink reports no gap and no
// disorder when robotexec stops.
func TestPipelineOverTheBroker(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{})
	last := listen(t, b.URL(), "pipeline/3")
	logs := &lockedBuffer{}
	app := startApp(t, b.URL(), `
  - { name: source, type: heartbeat, params: { topic: pipeline/0, period: 1ms } }
  - { name: stage1, type: stage, params: { input: pipeline/0, output: pipeline/1 } }
  - { name: stage2, type: stage, params: { input: pipeline/1, output: pipeline/2, work: 2ms } }
  - { name: stage3, type: stage, params: { input: pipeline/2, output: pipeline/3 } }
  - { name: sink, type: sink, params: { input: pipeline/3 } }
`, logs)

	const want = 100
	deadline := time.After(15 * time.Second)
	for seq := uint64(1); seq <= want; seq++ {
		select {
		case m := <-last:
			var beat struct {
				Node string `json:"node"`
				Seq  uint64 `json:"seq"`
			}
			require.NoError(t, json.Unmarshal(m.Payload, &beat))
			require.Equal(t, "source", beat.Node, "the heartbeat's payload passes unchanged")
			require.Equal(t, seq, beat.Seq)
		case <-deadline:
			t.Fatalf("got %d of %d messages of the last stage within 15s", seq-1, want)
		}
	}
	stop(t, app)
	report := regexp.MustCompile(`msg=sink node=sink received=(\d+) last_seq=\d+ gaps=0 out_of_order=0`).FindStringSubmatch(logs.String())
	require.NotNil(t, report, "the sink's report at the end: %s", logs.String())
	received, err := strconv.Atoi(report[1])
	require.NoError(t, err)
	require.GreaterOrEqual(t, received, want, "the sink got what the other client saw, and more")
}

var clientSeq struct {
	sync.Mutex
	n int
}

func clientID(role string) string {
	clientSeq.Lock()
	defer clientSeq.Unlock()
	clientSeq.n++
	return fmt.Sprintf("pipeline-test-%s-%d-%d", role, time.Now().UnixNano(), clientSeq.n)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// startApp runs the nodes (YAML of the config's nodes list) with
// robotexec.Start, as robotexec run would, connected to the broker at url,
// logging to logs; the app is stopped when the test ends, if not before.
func startApp(t *testing.T, url, nodesYAML string, logs io.Writer) *robotexec.App {
	t.Helper()
	cfg, err := config.Parse("test.yaml", []byte(fmt.Sprintf(
		"executor: { workers: 2, queue_depth: 10, overflow: block }\nmqtt: { broker: %q, client_id: %s }\nnodes:\n%s",
		url, clientID("app"), nodesYAML)), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	app, err := robotexec.Start(ctx, cfg, slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	t.Cleanup(func() { stop(t, app) })
	return app
}

func stop(t *testing.T, app *robotexec.App) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	require.NoError(t, app.Shutdown(ctx))
}

func dial(t *testing.T, url, role string) *mqtt.Client {
	t.Helper()
	c, err := mqtt.Dial(mqtt.Config{Broker: url, ClientID: clientID(role), QoS: 1, CleanSession: true, StatusTopic: "-", Logger: quiet()})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	require.NoError(t, c.WaitConnected(ctx))
	return c
}

// listen subscribes another client to filter, acknowledged by the broker
// when it returns; the messages arrive on the channel.
func listen(t *testing.T, url, filter string) <-chan subscribers.Message {
	t.Helper()
	c := dial(t, url, "listener")
	ex := executor.New(executor.Options{Workers: 1, Logger: quiet()})
	ch := make(chan subscribers.Message, 1000)
	_, err := ex.NewOwner("listener", nil).Subscribe(c, filter, func(m subscribers.Message) { ch <- m }, executor.Depth(1000))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ex.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ch
}
