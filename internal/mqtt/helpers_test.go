package mqtt_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/facade"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
)

// waitFor bounds every wait of these tests.
const waitFor = 20 * time.Second

// forEachBroker runs f against the embedded broker and against mosquitto
// (skipped without it, failed without it under ROBOTEXEC_TEST_ALL=1), in
// parallel with each other and with the package's other parallel tests:
// a test that calls it is parallel.
func forEachBroker(t *testing.T, opts mqtttest.MosquittoOptions, f func(t *testing.T, b mqtttest.Broker)) {
	t.Parallel()
	t.Run("embedded", func(t *testing.T) {
		t.Parallel()
		f(t, mqtttest.Embedded(t, broker.Config{Users: everyTopic(opts.Users), Logger: newLogSink(t).logger()}))
	})
	t.Run("mosquitto", func(t *testing.T) {
		t.Parallel()
		f(t, mqtttest.Mosquitto(t, opts))
	})
}

// everyTopic gives each user of users, with its password, access to every
// topic, as mosquitto does without an ACL file.
func everyTopic(users map[string]string) map[string]broker.User {
	out := make(map[string]broker.User, len(users))
	for name, password := range users {
		out[name] = broker.User{Password: password, Read: []string{"#"}, Write: []string{"#"}}
	}
	return out
}

// logSink collects a test's logs; it forwards them to t.Log only while the
// test runs, since paho's goroutines may log after it ended.
type logSink struct {
	mu     sync.Mutex
	t      *testing.T
	buf    bytes.Buffer
	active bool
}

func newLogSink(t *testing.T) *logSink {
	s := &logSink{t: t, active: true}
	t.Cleanup(func() {
		s.mu.Lock()
		s.active = false
		logs := s.buf.String()
		s.mu.Unlock()
		if t.Failed() && !testing.Verbose() {
			t.Logf("the logs, which -v shows as they come:\n%s", lastLines(logs, maxFailedLogLines))
		}
	})
	return s
}

// maxFailedLogLines bounds the logs of a failed test shown without -v.
const maxFailedLogLines = 400

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return fmt.Sprintf("(%d lines before)\n%s", len(lines)-n, strings.Join(lines[len(lines)-n:], "\n"))
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	if s.active && testing.Verbose() {
		s.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func (s *logSink) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(s, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// dial connects a client to url and closes it when the test ends. cfg's
// Broker, ClientID (when empty) and Logger are filled in.
func dial(t *testing.T, url string, cfg mqtt.Config) *mqtt.Client {
	t.Helper()
	c := dialNoWait(t, url, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, c.WaitConnected(ctx))
	return c
}

func dialNoWait(t *testing.T, url string, cfg mqtt.Config) *mqtt.Client {
	t.Helper()
	cfg.Broker = url
	if cfg.ClientID == "" {
		cfg.ClientID = clientID(t, "c")
	}
	if cfg.Logger == nil {
		cfg.Logger = newLogSink(t).logger()
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = time.Second
	}
	c, err := mqtt.Dial(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var idSeq struct {
	sync.Mutex
	n int
}

// clientID returns an ID unique in this test binary.
func clientID(t testing.TB, prefix string) string {
	idSeq.Lock()
	defer idSeq.Unlock()
	idSeq.n++
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	if len(name) > 40 {
		name = name[len(name)-40:]
	}
	return fmt.Sprintf("%s-%s-%d", prefix, name, idSeq.n)
}

// rawClient is a plain paho client for publishing and observing.
func rawClient(t testing.TB, url string, opts ...func(*paho.ClientOptions)) paho.Client {
	t.Helper()
	o := paho.NewClientOptions().AddBroker(url).SetClientID(clientID(t, "raw")).
		SetProtocolVersion(4).SetCleanSession(true).SetAutoReconnect(true).
		SetConnectRetry(true).SetConnectRetryInterval(200 * time.Millisecond).
		SetMaxReconnectInterval(time.Second).SetOrderMatters(true).
		SetStore(paho.NewOrderedMemoryStore())
	for _, f := range opts {
		f(o)
	}
	c := paho.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(waitFor) || tok.Error() != nil {
		t.Fatalf("raw client connect to %s: %v", url, tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	return c
}

// publish publishes and waits for the broker's acknowledgement.
func publish(t testing.TB, c paho.Client, topic string, qos byte, retain bool, payload string) {
	t.Helper()
	tok := c.Publish(topic, qos, retain, payload)
	if !tok.WaitTimeout(waitFor) || tok.Error() != nil {
		t.Fatalf("publish to %s: %v", topic, tok.Error())
	}
}

// startExecutor runs ex until the test ends.
func startExecutor(t *testing.T, ex *executor.Executor) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("executor: %v", err)
			}
		case <-time.After(waitFor):
			t.Errorf("executor did not stop within %v", waitFor)
		}
	})
}

// recorder records the messages a callback received, in order.
type recorder struct {
	mu     sync.Mutex
	msgs   []subscribers.Message
	change chan struct{}
}

func newRecorder() *recorder { return &recorder{change: make(chan struct{}, 1)} }

func (r *recorder) add(_ context.Context, m subscribers.Message) {
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
	select {
	case r.change <- struct{}{}:
	default:
	}
}

func (r *recorder) snapshot() []subscribers.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]subscribers.Message(nil), r.msgs...)
}

// waitUntil waits until cond holds for the recorded messages, or fails
// the test after waitFor.
func (r *recorder) waitUntil(t *testing.T, what string, cond func([]subscribers.Message) bool) []subscribers.Message {
	t.Helper()
	deadline := time.NewTimer(waitFor)
	defer deadline.Stop()
	for {
		msgs := r.snapshot()
		if cond(msgs) {
			return msgs
		}
		select {
		case <-r.change:
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for %s; have %d messages", waitFor, what, len(msgs))
		}
	}
}

func (r *recorder) waitCount(t *testing.T, n int) []subscribers.Message {
	t.Helper()
	return r.waitUntil(t, fmt.Sprintf("%d messages", n), func(m []subscribers.Message) bool { return len(m) >= n })
}

// eventually polls cond every 10 ms until it holds, or fails the test.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", waitFor, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// seqOf parses a payload "topic#seq" or "seq".
func seqOf(t *testing.T, p []byte) int {
	t.Helper()
	s := string(p)
	if i := strings.LastIndexByte(s, '#'); i >= 0 {
		s = s[i+1:]
	}
	n, err := strconv.Atoi(s)
	require.NoError(t, err, "payload %q", p)
	return n
}

// msgOf returns the message that p's Publish of payload publishes.
func msgOf(p *subscribers.Publisher, payload []byte) subscribers.Message {
	m := facade.Publisher(p).Message(payload)
	return *facade.Message(&m)
}
