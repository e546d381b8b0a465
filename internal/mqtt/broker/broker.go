package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"sync"
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
	// DefaultMaxConnections is the default of Config.MaxConnections.
	DefaultMaxConnections = 1000

	// closeGrace is how long Close lets mochi disconnect its clients
	// before closing the remaining connections itself.
	closeGrace = 2 * time.Second

	// sysInterval is how often, in seconds, the broker refreshes its
	// $SYS topics: mosquitto's default. Each refresh stops the world to
	// read the memory statistics and stores twenty retained messages;
	// at mochi's default, every second, that was a large share of an
	// idle process's CPU.
	sysInterval = 10
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
	// MaxPacketSize is the largest MQTT packet, in bytes, accepted from a
	// client; a client that sends a larger one is disconnected, and
	// counted (Stats.PacketsTooLarge). The broker checks a packet's size
	// from its header, before it allocates memory for the packet. Before
	// a client has authenticated, the limit is 64 KiB (or MaxPacketSize,
	// when smaller): a larger CONNECT closes the connection before the
	// broker reads it (Stats.ConnectsTooLarge). (optional) Defaults to
	// DefaultMaxPacketSize, 16 MiB.
	MaxPacketSize int
	// MaxConnections is the number of connections the broker keeps open
	// at once, those that have not sent their CONNECT yet included; it
	// closes a connection beyond it as soon as it accepts it, and counts
	// it (Stats.ConnectionsRefused). A connection that has not sent its
	// CONNECT costs a few KiB; one that has, at least 8 bytes for each of
	// its MaxQueued messages. (optional) Defaults to
	// DefaultMaxConnections, 1000.
	MaxConnections int
}

// Broker is an MQTT broker running in this process.
type Broker struct {
	srv      *mochi.Server
	audience *audienceHook
	ln       *listener
	counts   *counters
	addr     string
	tls      bool

	once sync.Once
	err  error
}

// New starts a broker as cfg says. It returns once the broker listens; it
// serves clients until Close.
func New(cfg Config) (*Broker, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
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
	srv := mochi.New(&mochi.Options{Capabilities: caps, Logger: log, SysTopicResendInterval: sysInterval})
	counts := &counters{}
	audience, err := addHooks(srv, cfg, counts, log)
	if err != nil {
		return nil, err
	}

	raw, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("broker: listen on %s: %w", cfg.Listen, err)
	}
	ln := newListener(raw, cfg, counts, log)
	if err := srv.AddListener(listeners.NewNet("robotexec", ln)); err != nil {
		ln.shutdown(context.Background())
		return nil, fmt.Errorf("broker: %w", err)
	}
	if err := srv.Serve(); err != nil {
		ln.shutdown(context.Background())
		return nil, fmt.Errorf("broker: serve: %w", err)
	}
	b := &Broker{srv: srv, audience: audience, ln: ln, counts: counts, addr: raw.Addr().String(), tls: cfg.TLS != nil}
	cfg.Logger.Debug("broker: listening", "addr", b.addr, "tls", cfg.TLS != nil)
	return b, nil
}

// setDefaults fills in the defaults of cfg, and checks its limits.
func (cfg *Config) setDefaults() error {
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	var errs []error
	limit := func(v *int, name string, def, hi int) {
		switch {
		case *v == 0:
			*v = def
		case *v < 0 || *v > hi:
			errs = append(errs, fmt.Errorf("broker: %s %d is not within 1..%d", name, *v, hi))
		}
	}
	limit(&cfg.MaxQueued, "MaxQueued", DefaultMaxQueued, 65535)
	limit(&cfg.MaxPacketSize, "MaxPacketSize", DefaultMaxPacketSize, 268435455+5)
	limit(&cfg.MaxConnections, "MaxConnections", DefaultMaxConnections, math.MaxInt32)
	return errors.Join(errs...)
}

// addHooks adds the broker's hooks to srv and returns the one that
// counts changes of the audience.
func addHooks(srv *mochi.Server, cfg Config, counts *counters, log *slog.Logger) (*audienceHook, error) {
	// mochi refuses every connection unless a hook authenticates it.
	audience := &audienceHook{srv: srv}
	hooks := []mochi.Hook{newAuthHook(cfg.Users, cfg.Anonymous, counts, log), newPacketIDHook(), newTakeoverHook(srv, log),
		&endedSessionHook{srv: srv, log: log},
		newStaleWillHook(srv), newStaleAckHook(srv), audience, &limitHook{counts: counts},
		&mqtt5Hook{},
		newRetainGuardHook()} // last: see retainGuardHook
	for _, h := range hooks {
		if err := srv.AddHook(h, nil); err != nil {
			return nil, fmt.Errorf("broker: %w", err)
		}
	}
	return audience, nil
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

// ErrClientsConnected is the error of Close and Shutdown when clients
// were still connected, and the broker's goroutines serving them running,
// when the wait ended.
var ErrClientsConnected = errors.New("broker: close: clients did not disconnect in time")

// Close stops the broker: it stops listening and disconnects every client
// (their last wills are published), and returns when the broker's
// goroutines have finished, or with ErrClientsConnected when they have not
// after a few seconds. Sessions and retained messages are lost. Close is
// idempotent; later calls, of Close or Shutdown, return the first
// call's result.
func (b *Broker) Close() error { return b.closeOnce(context.Background(), closeGrace) }

// Shutdown is Close with its last wait ending at ctx's end instead of
// after 2 s: the clients are given up to 2 s (less if ctx ends first) to
// disconnect on their own, then their connections are closed, and the
// broker's goroutines are waited for until ctx ends. If they have not
// finished by then, it returns ErrClientsConnected joined with ctx.Err();
// they end when their connections' reads fail. A ctx without a deadline
// waits as long as they take. It is idempotent with Close.
func (b *Broker) Shutdown(ctx context.Context) error { return b.closeOnce(ctx, 0) }

// closeOnce runs close once; step, when not 0, also bounds the last wait.
func (b *Broker) closeOnce(ctx context.Context, step time.Duration) error {
	b.once.Do(func() { b.err = b.close(ctx, step) })
	return b.err
}

func (b *Broker) close(ctx context.Context, step time.Duration) error {
	// Stop accepting, close the connections that have not sent their
	// CONNECT, and let mochi start reading those it got.
	b.ln.shutdown(ctx)
	done := make(chan error, 1)
	go func() { done <- b.srv.Close() }()
	grace, cancel := context.WithTimeout(ctx, closeGrace)
	defer cancel()
	select {
	case err := <-done:
		return err
	case <-grace.Done():
	}
	// mochi still waits for a client: close every connection.
	b.ln.closeAll()
	if step != 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, step)
		defer cancel()
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	select {
	case err := <-done:
		return err
	default:
	}
	if err := ctx.Err(); err != nil && step == 0 {
		return errors.Join(ErrClientsConnected, err)
	}
	return ErrClientsConnected
}
