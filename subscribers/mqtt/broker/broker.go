package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
)

const (
	// DefaultListen is where the broker listens when Config.Listen is empty:
	// loopback only, the standard MQTT port.
	DefaultListen = "127.0.0.1:1883"
	// DefaultMaxQueued is the default of Config.MaxQueued.
	DefaultMaxQueued = 16384
	// DefaultMaxPacketSize is the default of Config.MaxPacketSize.
	DefaultMaxPacketSize = 16 << 20

	// connectTimeout bounds the time between accepting a connection and
	// its CONNECT packet; mochi sets no deadline of its own there, and a
	// connection that never sends CONNECT would also hold up Close.
	connectTimeout = 10 * time.Second
	// closeGrace is how long Close lets mochi disconnect its clients
	// before closing the remaining connections itself.
	closeGrace = 2 * time.Second
)

// Config configures an embedded broker. The zero value is valid: a broker
// on 127.0.0.1:1883 that anyone may use.
type Config struct {
	// Listen is the TCP address to listen on, host:port. (optional)
	// Defaults to DefaultListen, 127.0.0.1:1883: loopback only, so that
	// only this machine can reach the broker unless configured otherwise.
	// Port 0 picks a free port; [Broker.Addr] reports it.
	Listen string
	// Logger receives the broker's logs. (optional) Defaults to
	// slog.Default(). Routine messages (start, stop, a client's connection
	// closing) are logged at Debug; warnings such as a client's queue
	// overflowing stay warnings.
	Logger *slog.Logger
	// Users, when not empty, maps the usernames allowed to connect to
	// their passwords and the topics they may use; a connection with any
	// other username, or a wrong password, is refused ("not authorised").
	// (optional) Defaults to none: anyone may connect and use every topic.
	Users map[string]User
	// Anonymous says whether clients that connect without a username are
	// let in, with access to every topic. (optional) Defaults to
	// AnonymousDefault: only when Users is empty.
	Anonymous Anonymous
	// TLS, when set, makes the listener speak MQTT over TLS (ssl://
	// URLs) with this configuration; set ClientAuth and ClientCAs in it to
	// require client certificates. (optional) Defaults to plain TCP.
	TLS *tls.Config
	// MaxQueued is the number of QoS 1 and 2 messages the broker holds
	// for one client: sent and not yet acknowledged, or queued while a
	// persistent session is disconnected. A message beyond it is dropped
	// and a warning logged, as mosquitto's max_queued_messages does (its
	// default, 1,000, loses data on a burst; ours is 16 times that). It is
	// also the number of messages waiting to be written to one client.
	// (optional) Defaults to DefaultMaxQueued; at most 65535 (the MQTT
	// packet identifier space).
	MaxQueued int
	// NoLocal, when set, says which subscriptions get MQTT 5's "no local"
	// option, which MQTT 3.1.1 clients cannot ask for: the broker never
	// sends such a subscription's client the messages that client
	// published itself, live or retained. It is asked at each
	// subscription of a filter by a client; shared subscriptions never get
	// it. A process that embeds the broker sets it for its own client,
	// whose publications reach its subscriptions directly. The broker
	// sends a client one copy of a message for all its subscriptions, so
	// a client's own message on a topic that one of its no-local
	// subscriptions and one of its shared ones match does not reach the
	// shared one when the broker picks that client for its group.
	// (optional) Defaults to none.
	NoLocal func(clientID, filter string) bool
	// MaxPacketSize is the largest MQTT packet, in bytes, accepted from a
	// client; a client that sends a larger one is disconnected. (optional)
	// Defaults to DefaultMaxPacketSize, 16 MiB.
	MaxPacketSize int
}

// Broker is an MQTT broker running in this process.
type Broker struct {
	srv      *mochi.Server
	audience *audienceHook
	ln       *trackingListener
	addr     string
	tls      bool

	once sync.Once
	err  error
}

// New starts a broker as cfg says. It returns once the broker listens; it
// serves clients until Close.
func New(cfg Config) (*Broker, error) {
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	switch {
	case cfg.MaxQueued == 0:
		cfg.MaxQueued = DefaultMaxQueued
	case cfg.MaxQueued < 0 || cfg.MaxQueued > 65535:
		return nil, fmt.Errorf("broker: MaxQueued %d is not within 1..65535", cfg.MaxQueued)
	}
	switch {
	case cfg.MaxPacketSize == 0:
		cfg.MaxPacketSize = DefaultMaxPacketSize
	case cfg.MaxPacketSize < 0 || cfg.MaxPacketSize > 268435455+5:
		return nil, fmt.Errorf("broker: MaxPacketSize %d is not within 1..268435460", cfg.MaxPacketSize)
	}
	log := slog.New(quietHandler{h: cfg.Logger.Handler()})

	caps := mochi.NewDefaultServerCapabilities()
	caps.MaximumInflight = uint16(cfg.MaxQueued)
	caps.MaximumClientWritesPending = int32(cfg.MaxQueued)
	caps.MaximumPacketSize = uint32(cfg.MaxPacketSize)
	// mochi purges retained and queued messages older than a day by
	// default, also for MQTT 3.1.1 clients that cannot ask for it; a
	// robot's retained state must not vanish overnight.
	caps.MaximumMessageExpiryInterval = 0
	srv := mochi.New(&mochi.Options{Capabilities: caps, Logger: log})

	// mochi refuses every connection unless a hook authenticates it.
	audience := &audienceHook{srv: srv}
	hooks := []mochi.Hook{newAuthHook(cfg.Users, cfg.Anonymous), newPacketIDHook(), newTakeoverHook(srv, log),
		newStaleWillHook(srv), newStaleAckHook(srv), audience}
	for _, h := range hooks {
		if err := srv.AddHook(h, nil); err != nil {
			return nil, fmt.Errorf("broker: %w", err)
		}
	}
	if cfg.NoLocal != nil {
		if err := srv.AddHook(&noLocalHook{noLocal: cfg.NoLocal}, nil); err != nil {
			return nil, fmt.Errorf("broker: %w", err)
		}
	}

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("broker: listen on %s: %w", cfg.Listen, err)
	}
	tl := &trackingListener{Listener: ln, conns: make(map[*trackedConn]struct{})}
	var l net.Listener = tl
	if cfg.TLS != nil {
		l = tls.NewListener(tl, cfg.TLS)
	}
	if err := srv.AddListener(listeners.NewNet("robotexec", l)); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("broker: %w", err)
	}
	if err := srv.Serve(); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("broker: serve: %w", err)
	}
	b := &Broker{srv: srv, audience: audience, ln: tl, addr: ln.Addr().String(), tls: cfg.TLS != nil}
	cfg.Logger.Debug("broker: listening", "addr", b.addr, "tls", cfg.TLS != nil)
	return b, nil
}

// Addr returns the address the broker listens on, host:port, with the
// real port when Config.Listen asked for port 0.
func (b *Broker) Addr() string { return b.addr }

// URL returns the URL clients connect to: tcp://Addr(), or ssl://Addr()
// with TLS.
func (b *Broker) URL() string {
	if b.tls {
		return "ssl://" + b.addr
	}
	return "tcp://" + b.addr
}

// Close stops the broker: it stops listening and disconnects every client
// (their last wills are published), and returns when the broker's
// goroutines have finished. Sessions and retained messages are lost. Close
// is idempotent; later calls return the first call's result.
func (b *Broker) Close() error {
	b.once.Do(func() {
		// mochi counts a connection's goroutine in a WaitGroup that its
		// Close waits on, from the goroutine itself: stop accepting, and
		// let the goroutines of accepted connections start, before
		// Close waits (else Add races with Wait).
		b.ln.stopAccepting()
		// mochi waits for connections that have not sent CONNECT yet,
		// without a deadline: close those first.
		b.ln.closeSilent()
		done := make(chan error, 1)
		go func() { done <- b.srv.Close() }()
		select {
		case b.err = <-done:
			return
		case <-time.After(closeGrace):
		}
		// mochi still waits for a client: close every connection.
		b.ln.closeAll()
		select {
		case b.err = <-done:
		case <-time.After(closeGrace):
			b.err = errors.New("broker: close: clients did not disconnect in time")
		}
	})
	return b.err
}

// trackingListener remembers the connections it accepted, gives each a
// deadline for its CONNECT packet, and keeps accepting after temporary
// errors (mochi's listener gives up on the first error).
type trackingListener struct {
	net.Listener

	mu     sync.Mutex
	conns  map[*trackedConn]struct{}
	closed bool
}

func (l *trackingListener) Accept() (net.Conn, error) {
	delay := 5 * time.Millisecond
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if temporary(err) {
				time.Sleep(delay)
				delay = min(2*delay, time.Second)
				continue
			}
			return nil, err
		}
		// mochi replaces this deadline with the keepalive's once the
		// CONNECT packet arrived.
		_ = c.SetReadDeadline(time.Now().Add(connectTimeout))
		tc := &trackedConn{Conn: c, l: l, reading: make(chan struct{})}
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			_ = c.Close()
			return nil, net.ErrClosed
		}
		l.conns[tc] = struct{}{}
		l.mu.Unlock()
		return tc, nil
	}
}

// stopAccepting closes the listener and waits (up to closeGrace) until the
// broker started reading every connection it accepted.
func (l *trackingListener) stopAccepting() {
	l.mu.Lock()
	l.closed = true
	conns := make([]*trackedConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	_ = l.Listener.Close()
	deadline := time.NewTimer(closeGrace)
	defer deadline.Stop()
	for _, c := range conns {
		select {
		case <-c.reading:
		case <-deadline.C:
			return
		}
	}
}

// closeSilent closes the connections that have not sent CONNECT.
func (l *trackingListener) closeSilent() {
	l.mu.Lock()
	var silent []*trackedConn
	for c := range l.conns {
		if !c.connected.Load() {
			silent = append(silent, c)
		}
	}
	l.mu.Unlock()
	for _, c := range silent {
		_ = c.Close()
	}
}

func (l *trackingListener) closeAll() {
	l.mu.Lock()
	l.closed = true
	conns := make([]*trackedConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	_ = l.Listener.Close()
	for _, c := range conns {
		_ = c.Close()
	}
}

type trackedConn struct {
	net.Conn
	l         *trackingListener
	once      sync.Once
	connected atomic.Bool   // CONNECT received
	reading   chan struct{} // closed on the broker's first Read
	readOnce  sync.Once
}

func (c *trackedConn) Read(p []byte) (int, error) {
	c.readOnce.Do(func() { close(c.reading) })
	return c.Conn.Read(p)
}

// markConnected records that c, a connection the broker accepted, sent its
// CONNECT packet.
func markConnected(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if tc, ok := c.(*trackedConn); ok {
		tc.connected.Store(true)
	}
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// temporary reports whether an Accept error is worth waiting out: the
// process ran out of file descriptors or memory, or a peer gave up while
// being accepted.
func temporary(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
