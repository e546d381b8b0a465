package mqtttest

import (
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
)

// TB is the part of testing.TB the helpers use; *testing.T and *testing.B
// satisfy it. The package does not import testing so that benchmarks
// outside tests can use it too.
type TB interface {
	Helper()
	Name() string
	Cleanup(func())
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Skipf(format string, args ...any)
	TempDir() string
}

// Broker is a broker started for a test.
type Broker interface {
	// Name is "embedded" or "mosquitto".
	Name() string
	// Addr is the broker's host:port on loopback.
	Addr() string
	// URL is tcp://Addr().
	URL() string
	// Stop stops the broker and waits until it has exited.
	Stop()
	// Start starts a stopped broker again on the same port.
	Start()
}

// EmbeddedBroker is the embedded broker started for a test.
type EmbeddedBroker struct {
	t    TB
	cfg  broker.Config
	addr string

	mu sync.Mutex
	b  *broker.Broker
}

// Embedded starts the embedded broker with cfg on a free loopback port
// (cfg.Listen is ignored) and stops it when the test ends. A nil
// cfg.Logger discards the broker's logs.
func Embedded(t TB, cfg broker.Config) *EmbeddedBroker {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	if cfg.Logger == nil {
		cfg.Logger = discard
	}
	b, err := broker.New(cfg)
	if err != nil {
		t.Fatalf("mqtttest: start embedded broker: %v", err)
	}
	e := &EmbeddedBroker{t: t, cfg: cfg, addr: b.Addr(), b: b}
	t.Cleanup(e.Stop)
	return e
}

// Name returns "embedded".
func (e *EmbeddedBroker) Name() string { return "embedded" }

// Addr returns the broker's address.
func (e *EmbeddedBroker) Addr() string { return e.addr }

// URL returns tcp://Addr().
func (e *EmbeddedBroker) URL() string { return "tcp://" + e.addr }

// Broker returns the running broker, nil when stopped.
func (e *EmbeddedBroker) Broker() *broker.Broker {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.b
}

// Stop closes the broker. Its sessions and retained messages are lost:
// mochi keeps them in memory only.
func (e *EmbeddedBroker) Stop() {
	e.mu.Lock()
	b := e.b
	e.b = nil
	e.mu.Unlock()
	if b != nil {
		if err := b.Close(); err != nil {
			e.t.Logf("mqtttest: stop embedded broker: %v", err)
		}
	}
}

// Start starts a new embedded broker on the same address.
func (e *EmbeddedBroker) Start() {
	e.t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.b != nil {
		return
	}
	cfg := e.cfg
	cfg.Listen = e.addr
	var err error
	// The port was ours a moment ago; a client's connection attempt in
	// between cannot take it, but give the kernel a moment if it objects.
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.b, err = broker.New(cfg)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		e.t.Fatalf("mqtttest: restart embedded broker on %s: %v", e.addr, err)
	}
}

// WaitDial waits until something accepts TCP connections on addr, or
// timeout passes.
func WaitDial(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mqtttest: nothing accepts connections on %s after %v: %w", addr, timeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
