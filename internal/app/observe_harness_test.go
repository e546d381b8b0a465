package app

// The harness of the observability tests (observe_test.go): an instance
// started and stopped as robotexec run does, against an embedded broker of
// the test's own, with metrics scraped over HTTP, and the test-only node
// type test_probe, which counts its runs, blocks or panics on demand.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/nodes"
	_ "github.com/robotexec/robotexec/nodes/builtin" // heartbeat
	"github.com/robotexec/robotexec/subscribers"
)

// probe is the state of a test_probe node, by node name.
type probe struct {
	runs    atomic.Int64
	entered chan struct{} // a "block" message started
	release chan struct{} // closed to let "block" messages return
	once    sync.Once
}

var probes sync.Map // node name → *probe

func newProbe() *probe { return &probe{entered: make(chan struct{}, 1), release: make(chan struct{})} }

func probeOf(name string) *probe {
	p, _ := probes.LoadOrStore(name, newProbe())
	return p.(*probe)
}

func (p *probe) unblock() { p.once.Do(func() { close(p.release) }) }

func init() {
	nodes.Register("test_probe", "test node: counts its runs; payload block blocks, panic panics", func(n *nodes.Node) error {
		params := struct {
			Topic string `yaml:"topic"`
			Depth int    `yaml:"depth"`
			JSON  bool   `yaml:"json"`
		}{Depth: 10}
		if err := n.Params(&params); err != nil {
			return err
		}
		p := probeOf(n.Name())
		opts := []executor.Option{executor.Name("probe"), executor.Depth(params.Depth), executor.Overflow(subscribers.DropNewest)}
		if params.JSON {
			nodes.Subscribe(n, params.Topic, func(context.Context, map[string]any) { p.runs.Add(1) }, opts...)
			return nil
		}
		n.Subscribe(params.Topic, func(ctx context.Context, m subscribers.Message) {
			defer p.runs.Add(1)
			switch string(m.Payload) {
			case "block":
				p.entered <- struct{}{}
				<-p.release
			case "panic":
				panic("probe: panic on demand")
			}
		}, opts...)
		return nil
	})
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the log lines that contain substr.
func (b *syncBuffer) lines(substr string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), substr) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// e2e is a running config against the test's own broker.
type e2e struct {
	a      *App
	broker *broker.Broker
	pub    *mqtt.Client
	logs   *syncBuffer
	base   string // http://host:port of the metrics server, if any
	done   bool
}

// startE2E starts a broker and then the config made of nodes (YAML list
// items), with metrics on a port the kernel picks.
func startE2E(t *testing.T, workers int, nodeYAML string, opts Options) *e2e {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })

	path := filepath.Join(t.TempDir(), "config.yaml")
	cfgText := fmt.Sprintf(`executor:
  workers: %d
mqtt:
  broker: %s
  client_id: e2e-%s
  clean_session: true
  qos: 1
metrics:
  listen: 127.0.0.1:0
nodes:
%s`, workers, b.URL(), strings.ReplaceAll(t.Name(), "/", "-"), nodeYAML)
	require.NoError(t, os.WriteFile(path, []byte(cfgText), 0o644))
	cfg, err := LoadAndCheck(path)
	require.NoError(t, err)
	for _, n := range cfg.Nodes {
		if n.Type == "test_probe" {
			// A fresh probe for each run (go test -count).
			probes.Store(n.Name, newProbe())
		}
	}

	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := Start(context.Background(), cfg, logger, opts)
	require.NoError(t, err)
	x := &e2e{a: a, broker: b, logs: logs, base: "http://" + a.obs.server.Addr().String()}
	t.Cleanup(func() {
		if !x.done {
			x.stop(t)
		}
	})
	pc, err := mqtt.Dial(mqtt.Config{Broker: b.URL(), ClientID: "e2e-pub-" + strings.ReplaceAll(t.Name(), "/", "-"),
		CleanSession: true, StatusTopic: "-", QoS: 1, Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { pc.Close() })
	x.pub = pc
	eventually(t, "the app's and the test's MQTT clients connect", func() bool {
		return a.client.Connected() && pc.Connected()
	})
	return x
}

func (x *e2e) stop(t *testing.T) {
	t.Helper()
	x.done = true
	for _, p := range x.probes() {
		p.unblock()
	}
	require.NoError(t, x.a.stop())
}

func (x *e2e) probes() []*probe {
	var ps []*probe
	for _, n := range x.a.cfg.Nodes {
		if n.Type == "test_probe" {
			ps = append(ps, probeOf(n.Name))
		}
	}
	return ps
}

// publish publishes payload on topic at QoS 1 and waits for the broker's
// acknowledgement.
func (x *e2e) publish(t *testing.T, topic, payload string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, x.pub.PublishWait(ctx, subscribers.Message{Topic: topic, Payload: []byte(payload), QoS: 1}))
}

// waitBound bounds every wait for something to happen.
const waitBound = 20 * time.Second

// eventually polls cond until it holds, at most waitBound.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, waitBound)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// scrape fetches /metrics and returns each series' value by its name and
// labels as series() writes them.
func (x *e2e) scrape(t *testing.T) map[string]float64 {
	t.Helper()
	code, body := httpGet(t, x.base+"/metrics")
	require.Equal(t, http.StatusOK, code, body)
	out := map[string]float64{}
	for _, l := range strings.Split(body, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		require.Positive(t, i, "exposition line %q", l)
		v, err := strconv.ParseFloat(l[i+1:], 64)
		require.NoError(t, err, "exposition line %q", l)
		out[l[:i]] = v
	}
	return out
}

// series writes a series' name and labels (name=value pairs) as the text
// exposition does: labels sorted by name, a bucket's le last.
func series(name string, labels ...string) string {
	var pairs []string
	le := ""
	for i := 0; i < len(labels); i += 2 {
		if labels[i] == "le" {
			le = fmt.Sprintf("le=%q", labels[i+1])
			continue
		}
		pairs = append(pairs, fmt.Sprintf("%s=%q", labels[i], labels[i+1]))
	}
	slices.Sort(pairs)
	if le != "" {
		pairs = append(pairs, le)
	}
	if len(pairs) == 0 {
		return name
	}
	return name + "{" + strings.Join(pairs, ",") + "}"
}

// metric returns a series' value, failing if it is not exposed.
func (x *e2e) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	key := series(name, labels...)
	v, ok := x.scrape(t)[key]
	require.True(t, ok, "no series %s", key)
	return v
}

// awaitMetric scrapes until cond holds for a series' value.
func (x *e2e) awaitMetric(t *testing.T, cond func(float64) bool, name string, labels ...string) float64 {
	t.Helper()
	var v float64
	eventually(t, "metric "+series(name, labels...), func() bool {
		v = x.metric(t, name, labels...)
		return cond(v)
	})
	return v
}

func (x *e2e) health(t *testing.T) (int, map[string]string) {
	t.Helper()
	code, body := httpGet(t, x.base+"/healthz")
	var h map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &h), body)
	return code, h
}
