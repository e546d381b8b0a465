package mqtt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/robotexec/robotexec/internal/ratelog"
	"github.com/robotexec/robotexec/subscribers"
)

var (
	// ErrClosed is returned by the methods of a closed client.
	ErrClosed = errors.New("mqtt: client closed")
	// ErrNotConnected is returned by a publication that cannot be made
	// for want of a connection: before the first connection, or at QoS 0
	// while reconnecting (paho would drop it silently).
	ErrNotConnected = errors.New("mqtt: not connected")
	// ErrSubscriptionRefused is returned when the broker refuses a
	// subscription (return code 0x80), for example for want of rights.
	ErrSubscriptionRefused = errors.New("mqtt: broker refused the subscription")
	// ErrNotAuthorized is the cause of a connection refused for its
	// credentials (bad username or password, or a user not allowed).
	ErrNotAuthorized = errors.New("mqtt: broker refused the credentials")
	// ErrUnconfirmed is returned by PublishWait for a publication whose
	// connection was lost before the broker acknowledged it: the broker
	// may not have it (it may also have refused it).
	ErrUnconfirmed = errors.New("mqtt: connection lost before the broker acknowledged the publication (it may have refused it)")
	// ErrForbidden is returned by a publication to a topic outside
	// Config.Writable: the broker would refuse it.
	ErrForbidden = errors.New("mqtt: the broker does not let this client publish to the topic")
)

const (
	// disconnectQuiesce is how long Close lets paho send what it has
	// before closing the connection, in milliseconds.
	disconnectQuiesce = 250
	// closeWait bounds Close's waits for the broker (the offline status)
	// and for the intake goroutine.
	closeWait = 2 * time.Second
	// failureLogEvery spaces out the logs of repeated failed connection
	// attempts that fail the same way.
	failureLogEvery = 30 * time.Second
)

// Client is an MQTT connection and the [subscribers.Router] that it is the
// remote of: the subscriptions attached to it (it is a
// [subscribers.Source]) receive the messages of their topic filters, and
// the router's publishers publish to the broker (and, with
// Config.InProcess, to the matching subscriptions of the process
// directly). See the package documentation.
type Client struct {
	cfg *settings
	log *slog.Logger
	pc  paho.Client

	stop        chan struct{} // closed by Close
	closeOnce   sync.Once
	closeErr    error // Close's result
	closed      atomic.Bool
	connectDone chan struct{} // closed when the first-connection loop ends
	resumed     chan struct{} // closed when paho completed the first connection (onConnect)
	intakeDone  chan struct{} // closed when the intake goroutine ends

	router *subscribers.Router
	in     intake
	out    outbound

	// mu guards the connection state below and the filters.
	mu       sync.Mutex
	wire     map[string]byte   // filters to subscribe on connecting, with their QoS
	kept     map[string][]byte // retained messages published on connecting (Keep)
	linkUp   bool              // connected, as far as the handlers know
	ready    bool              // connected and subscriptions renewed
	readyCh  chan struct{}     // closed when ready becomes true
	epoch    uint64            // counts connection attempts after losses
	lost     chan struct{}     // closed, and replaced, when epoch changes
	lastErr  error             // cause of the last failed attempt, nil once connected
	failures int               // failed attempts since the last connection
	failLog  time.Time         // when a failure was last logged
	failMsg  string            // and what it said

	reasserting atomic.Bool // a reassertOnline publication is under way
	statusMu    sync.Mutex  // orders reassertOnline before Close's offline

	// bg counts the client's own goroutines that Close waits for (see
	// background); bgDone, under bgMu, once it waits.
	bg     sync.WaitGroup
	bgMu   sync.Mutex
	bgDone bool

	// The fences and drain marks (fence.go): the number of the feeder's
	// last hand-over, of LeaveShared's last drain mark and of the last
	// one that came back, and this client's token.
	handoffs, drains, drained atomic.Uint64
	token                     string
	fenceOff                  atomic.Bool      // the broker refuses the fence topic
	lateFails                 *ratelog.Limiter // publication failures after Publish returned
	guard                     *poisonGuard     // publications the broker closes the connection on

	counters
}

type counters struct {
	connects, reconnects, losses, failures  atomic.Uint64
	received, redelivered, delivered, unrtd atomic.Uint64
	tooLarge, pendingFull                   atomic.Uint64
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
		cfg:         s,
		log:         s.Logger,
		stop:        make(chan struct{}),
		connectDone: make(chan struct{}),
		resumed:     make(chan struct{}),
		intakeDone:  make(chan struct{}),
		readyCh:     make(chan struct{}),
		lost:        make(chan struct{}),
	}
	c.wire = make(map[string]byte)
	c.token = newToken()
	c.lateFails = ratelog.New(10 * time.Second)
	c.guard = newPoisonGuard(s.Logger)
	c.router = subscribers.NewRouter(subscribers.RouterOptions{
		Remote:     (*remote)(c),
		RemoteOnly: !s.InProcess,
		NoEcho:     s.NoEcho,
		Audience:   s.Audience,
		QoS:        s.QoS,
		MaxPayload: max(s.MaxPayload, 0),
	})
	c.in.init()
	c.in.paused.Store(s.StartPaused)
	c.out.init()

	c.pc = paho.NewClient(c.pahoOptions())

	go c.runIntake()
	go c.runFeeder()
	go c.connectLoop()
	return c, nil
}

// pahoOptions returns paho's options for the client: the session, the
// handlers and the client's own store and connections.
func (c *Client) pahoOptions() *paho.ClientOptions {
	s := c.cfg
	o := paho.NewClientOptions()
	o.AddBroker(s.url.String())
	o.SetClientID(s.ClientID)
	o.SetUsername(s.Username)
	o.SetPassword(s.Password)
	// Without an explicit version paho retries a refused CONNECT with MQTT
	// 3.1, which hides why the broker refused.
	o.SetProtocolVersion(4)
	o.SetCleanSession(s.CleanSession)
	// The handler only appends to the intake, so ordered dispatch costs
	// nothing and keeps arrival order; acks wait until the intake handed
	// the message over (see intake.go).
	o.SetOrderMatters(true)
	o.SetAutoAckDisabled(true)
	o.SetStore(newStore(c.guard, s.beforeResume))
	o.SetAutoReconnect(true)
	o.SetMaxReconnectInterval(s.MaxBackoff)
	// The first connection is retried by connectLoop, with backoff and
	// errors it can see; paho's ConnectRetry has neither.
	o.SetConnectRetry(false)
	o.SetResumeSubs(false)
	o.SetKeepAlive(s.KeepAlive)
	o.SetPingTimeout(s.PingTimeout)
	o.SetConnectTimeout(s.ConnectTimeout)
	o.SetWriteTimeout(s.WriteTimeout)
	if s.tls != nil {
		o.SetTLSConfig(s.tls)
	}
	o.SetCustomOpenConnectionFn(func(uri *url.URL, o paho.ClientOptions) (net.Conn, error) {
		return openConnection(uri, o, c.guard)
	})
	if s.StatusTopic != "" {
		o.SetWill(s.StatusTopic, StatusOffline, 1, true)
	}
	// Set before Connect: with a persistent session the broker sends the
	// queued messages right after CONNACK, before OnConnect re-subscribes.
	// Subscriptions add no paho routes, so every message comes here, and
	// the router matches it.
	o.SetDefaultPublishHandler(c.onMessage)
	o.SetOnConnectHandler(c.onConnect)
	o.SetConnectionLostHandler(c.onConnectionLost)
	o.SetReconnectingHandler(c.onReconnecting)
	o.SetConnectionNotificationHandler(c.onNotification)
	return o
}

// ClientID returns the client's ID.
func (c *Client) ClientID() string { return c.cfg.ClientID }

// Broker returns the broker's URL, without credentials.
func (c *Client) Broker() string { return c.cfg.display }

// StatusTopic returns the topic of the client's online/offline status, ""
// when it is turned off.
func (c *Client) StatusTopic() string { return c.cfg.StatusTopic }

// Connected reports whether the client is connected and has renewed its
// subscriptions on this connection. It is the robotexec_mqtt_connected
// gauge.
func (c *Client) Connected() bool {
	c.mu.Lock()
	r := c.ready
	c.mu.Unlock()
	return r && c.pc.IsConnectionOpen()
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
		case <-c.stop:
			return ErrClosed
		case <-ctx.Done():
			c.mu.Lock()
			last := c.lastErr
			c.mu.Unlock()
			if last != nil {
				return fmt.Errorf("mqtt: not connected to %s: %w (last attempt: %w)", c.cfg.display, ctx.Err(), last)
			}
			return fmt.Errorf("mqtt: not connected to %s: %w", c.cfg.display, ctx.Err())
		}
	}
}

// LastError returns the error of the last failed connection attempt, with
// the broker's URL, or nil when the client connected since.
func (c *Client) LastError() error {
	c.mu.Lock()
	err := c.lastErr
	c.mu.Unlock()
	if err == nil {
		return nil
	}
	return fmt.Errorf("mqtt: connect to %s: %w", c.cfg.display, err)
}

// Stats counts what a client did since Dial.
type Stats struct {
	// Connected is Connected().
	Connected bool
	// Connects counts successful connections, the first included;
	// Reconnects those after the first (robotexec_mqtt_reconnects_total).
	Connects, Reconnects uint64
	// ConnectionLosses counts connections lost without Close.
	ConnectionLosses uint64
	// ConnectFailures counts failed connection attempts.
	ConnectFailures uint64
	// Received counts messages from the broker; Redelivered those among
	// them that the broker marked as possibly sent before (DUP).
	Received, Redelivered uint64
	// Delivered counts messages that at least one subscription accepted;
	// Unrouted those that matched no attached subscription.
	Delivered, Unrouted uint64
	// Dropped counts messages the client dropped before any subscription
	// queue, by reason: TooLarge (over MaxPayload), QueueFull (QoS 0 over
	// MaxPendingQoS0), each also counted on the subscriptions it was
	// meant for, and Unrouted (Unrouted again). Drops by a subscription's
	// overflow policy are counted by the subscription only.
	Dropped map[subscribers.Reason]uint64
	// Pending is the number of received messages not yet handed over;
	// Outbound the number of publications not yet handed to paho
	// (queued, or being handed).
	Pending, Outbound int
	// Published counts publications handed to paho; PublishFailed those
	// that failed: refused at once (not connected, closed, too many
	// waiting, too large, forbidden), refused by paho when the feeder
	// handed them over (logged, at most once every 10 s), dropped by
	// Close, or dropped from paho's store because the broker closed the
	// connection on them (see the package documentation).
	Published, PublishFailed uint64
	// Echoes counts the router's echo matching (see
	// [subscribers.Router]).
	Echoes subscribers.EchoStats
}

// Stats returns the client's counters.
func (c *Client) Stats() Stats {
	return Stats{
		Connected:        c.Connected(),
		Connects:         c.connects.Load(),
		Reconnects:       c.reconnects.Load(),
		ConnectionLosses: c.losses.Load(),
		ConnectFailures:  c.counters.failures.Load(),
		Received:         c.received.Load(),
		Redelivered:      c.redelivered.Load(),
		Delivered:        c.delivered.Load(),
		Unrouted:         c.unrtd.Load(),
		Dropped: map[subscribers.Reason]uint64{
			subscribers.TooLarge:  c.tooLarge.Load(),
			subscribers.QueueFull: c.pendingFull.Load(),
			subscribers.Unrouted:  c.unrtd.Load(),
		},
		Pending:       c.in.len(),
		Outbound:      c.out.len(),
		Published:     c.published.Load(),
		PublishFailed: c.publishFailed.Load() + c.guard.dropped.Load() + c.router.TooLarge(),
		Echoes:        c.router.EchoStats(),
	}
}

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
