package mqtt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	paho3 "github.com/eclipse/paho.mqtt.golang"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/ratelog"
)

var (
	// ErrClosed is returned by the methods of a closed client.
	ErrClosed = errors.New("mqtt: client closed")
	// ErrNotConnected is returned by a publication that cannot be made
	// for want of a connection: at QoS 0 while disconnected.
	ErrNotConnected = errors.New("mqtt: not connected")
	// ErrSubscriptionRefused is what a subscription that the broker
	// refused is (a *RefusedError names the reason).
	ErrSubscriptionRefused = errors.New("mqtt: broker refused the subscription")
	// ErrNotAuthorized is what a connection refused for its credentials
	// is (bad username or password, or a user not allowed).
	ErrNotAuthorized = errors.New("mqtt: broker refused the credentials")
	// ErrUnconfirmed is returned by PublishWait, with MQTT 3.1.1, for a
	// publication whose connection was lost before the broker
	// acknowledged it: the broker may not have it.
	ErrUnconfirmed = errors.New("mqtt: connection lost before the broker acknowledged the publication")
	// ErrForbidden is returned by a publication to a topic outside
	// Config.Writable: the broker would refuse it.
	ErrForbidden = errors.New("mqtt: the broker does not let this client publish to the topic")
)

const (
	// disconnectQuiesce is how long Close lets paho.mqtt.golang send what
	// it has before closing the connection, in milliseconds.
	disconnectQuiesce = 250
	// closeWait bounds Close's waits for the broker (the offline status)
	// and for the intake goroutine.
	closeWait = 2 * time.Second
	// failureLogEvery spaces out the logs of repeated failed connection
	// attempts that fail the same way.
	failureLogEvery = 30 * time.Second
	// ownID is the subscription identifier of the client's own
	// subscriptions, to its status topic and its describe topic: the
	// router's identifiers are 64 and above (see package internal/bus).
	ownID = 1
)

// Client is an MQTT connection and the [bus.Router] that it is the
// remote of: the subscriptions attached to it (it is a
// [subscribers.Source]) receive the messages of their topic filters, and
// the router's publishers publish to the broker (and, with
// Config.InProcess, to the matching subscriptions of the process
// directly). See the package documentation.
type Client struct {
	cfg *settings
	log *slog.Logger

	ctx        context.Context // canceled by Close
	cancel     context.CancelFunc
	closeDo    sync.Once
	closeErr   error // Close's result
	closed     atomic.Bool
	runDone    chan struct{} // closed when the connection goroutine ends
	intakeDone chan struct{} // closed when the intake goroutine ends

	router *bus.Router
	in     intake
	out    outbound
	sess5  *session5   // MQTT 5: the session across connections
	store3 paho3.Store // MQTT 3.1.1: the in-flight publications
	hooks  frameHooks

	// subMu serializes the subscriptions made at the broker: an attach's
	// and a new connection's renewal.
	subMu sync.Mutex
	// mu guards the connection state below and the filters.
	mu        sync.Mutex
	wire      map[string]*wireState // filters to subscribe on connecting
	kept      map[string][]byte     // retained messages published on connecting (Keep)
	link      link                  // the connection, nil between connections
	on        *endpoint             // its broker
	prev      *endpoint             // the broker of the last connection lost
	lostAt    time.Time             // when it was lost
	ready     bool                  // connected and subscriptions renewed
	readyCh   chan struct{}         // closed when ready becomes true
	lastErrs  map[*endpoint]error   // causes of the failed attempts since the last connection
	failures  int                   // failed attempts since the last connection
	failLogs  map[*endpoint]failLog // the last failure logged, by broker
	maxPacket atomic.Int64          // the broker's Maximum Packet Size; 0: none
	at        atomic.Int32          // the index of the broker connected to or tried

	reasserting atomic.Bool // a reassertOnline publication is under way
	describing  atomic.Bool // a describe answer is under way
	statusMu    sync.Mutex  // orders reassertOnline before Close's offline

	// bg counts the client's own goroutines that Close waits for (see
	// background); bgDone, under bgMu, once it waits.
	bg     sync.WaitGroup
	bgMu   sync.Mutex
	bgDone bool

	lateFails *ratelog.Limiter // publication failures after Publish returned
	refusals  refusals
	counters
}

// failLog is when a broker's failed attempt was last logged, and what it
// said.
type failLog struct {
	at  time.Time
	msg string
}

// wireState is a filter to subscribe at the broker on connecting, and
// whether it is the status topic's, which wants no retained message.
type wireState struct {
	w      bus.WireFilter
	status bool
}

type counters struct {
	connects, reconnects, losses, failures  atomic.Uint64
	sessionsLost                            atomic.Uint64
	received, redelivered, delivered, unrtd atomic.Uint64
	tooLarge, pendingFull                   atomic.Uint64
	braked, overSent                        atomic.Uint64
	published, publishFailed                atomic.Uint64
}

// Dial returns a client of the broker cfg names. It returns at once: the
// client connects in the background, retrying with backoff and logging
// that it waits while the broker cannot be reached, and starts working when
// the broker appears. Use [Client.WaitConnected] to wait for it. Dial fails
// only for an invalid cfg.
func Dial(cfg Config) (*Client, error) {
	s, err := cfg.settings()
	if err != nil {
		return nil, err
	}
	c := &Client{
		cfg:        s,
		log:        s.Logger,
		runDone:    make(chan struct{}),
		intakeDone: make(chan struct{}),
		readyCh:    make(chan struct{}),
		wire:       make(map[string]*wireState),
		lateFails:  ratelog.New(10 * time.Second),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.refusals.init()
	if s.v5 {
		c.sess5 = newSession5(c)
	} else {
		c.store3 = newStore3()
		if cfg.InProcess {
			s.Logger.Info("mqtt: protocol 3.1.1: in_process is off, every message goes through the broker", "broker", s.brokers[0].display)
		}
	}
	c.hooks.oversized = c.oversized
	c.router = bus.NewRouter(bus.RouterOptions{
		Remote:     (*remote)(c),
		InProcess:  s.InProcess,
		Audience:   s.Audience,
		QoS:        s.QoS,
		MaxPayload: s.MaxPayload,
	})
	c.in.init(s.ReceiveMaximum)
	c.in.paused.Store(s.StartPaused)
	c.out.init()
	go c.runIntake()
	go c.runFeeder()
	go c.run()
	return c, nil
}

// ClientID returns the client's ID.
func (c *Client) ClientID() string { return c.cfg.ClientID }

// Broker returns the URL, without credentials, of the broker the client
// is connected to, or between connections the one it tries or tries
// next.
func (c *Client) Broker() string { return c.cfg.brokers[c.at.Load()].display }

// Brokers returns the URLs, without credentials, of the brokers that the
// client tries in turn (see Config.Brokers).
func (c *Client) Brokers() []string {
	urls := make([]string, len(c.cfg.brokers))
	for i, ep := range c.cfg.brokers {
		urls[i] = ep.display
	}
	return urls
}

// brokerList returns the brokers' URLs for messages: the one, or the
// list.
func (c *Client) brokerList() string {
	if len(c.cfg.brokers) == 1 {
		return c.cfg.brokers[0].display
	}
	return strings.Join(c.Brokers(), ", ")
}

// StatusTopic returns the topic of the client's online/offline status, ""
// when it is turned off.
func (c *Client) StatusTopic() string { return c.cfg.StatusTopic }

// Connected reports whether the client is connected and has renewed its
// subscriptions on this connection. It is the robotexec_mqtt_connected
// gauge.
func (c *Client) Connected() bool {
	c.mu.Lock()
	r, l := c.ready, c.link
	c.mu.Unlock()
	if !r || l == nil {
		return false
	}
	select {
	case <-l.done():
		return false
	default:
		return true
	}
}

// WaitConnected waits until the client is connected (see Connected). When
// ctx ends first it returns an error that wraps ctx.Err() and the last
// connection attempt's error, with the broker's URL; after Close it
// returns ErrClosed.
func (c *Client) WaitConnected(ctx context.Context) error {
	for {
		c.mu.Lock()
		ready, ch := c.ready, c.readyCh
		c.mu.Unlock()
		if c.closed.Load() {
			return ErrClosed
		}
		if ready {
			return nil
		}
		select {
		case <-ch:
		case <-c.ctx.Done():
			return ErrClosed
		case <-ctx.Done():
			if last := c.LastError(); last != nil {
				return fmt.Errorf("mqtt: not connected to %s: %w (last attempt: %w)", c.brokerList(), ctx.Err(), last)
			}
			return fmt.Errorf("mqtt: not connected to %s: %w", c.brokerList(), ctx.Err())
		}
	}
}

// LastError returns the error of the last failed connection attempt, with
// the broker's URL, or nil when the client connected since. With several
// brokers it joins the last error of each broker tried since the last
// connection, in the order of the list.
func (c *Client) LastError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, ep := range c.cfg.brokers {
		if err := c.lastErrs[ep]; err != nil {
			errs = append(errs, fmt.Errorf("mqtt: connect to %s: %w", ep.display, err))
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return attemptErrors(errs)
}

// attemptErrors are the errors of the last attempts on several brokers:
// errors.Is and errors.As see each; the message is one line.
type attemptErrors []error

func (e attemptErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e attemptErrors) Unwrap() []error { return e }

// Pause stops handing incoming messages to subscriptions: they wait,
// unacknowledged, in the client (QoS 0 ones up to MaxPendingQoS0) or at the
// broker, until Resume; if the client closes meanwhile, a persistent
// session receives the QoS 1 and 2 ones again on its next connection.
// Publishing goes on. At shutdown, call Pause before stopping the
// executor, so that no message is acknowledged and then dropped because
// its subscription closed. Pause does not wait; a message being handed
// over completes.
func (c *Client) Pause() { c.in.paused.Store(true) }

// Resume hands the held messages over, in order, and the later ones as
// they come. See Config.StartPaused.
func (c *Client) Resume() {
	c.in.paused.Store(false)
	select {
	case c.in.wake <- struct{}{}:
	default:
	}
}
