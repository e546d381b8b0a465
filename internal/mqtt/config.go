package mqtt

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/robotexec/robotexec/internal/bus"
)

// Defaults of Config's fields.
const (
	DefaultBroker         = "tcp://127.0.0.1:1883"
	DefaultMaxPayload     = 1 << 20
	DefaultMaxPendingQoS0 = 10000
	DefaultKeepAlive      = 30 * time.Second
	DefaultPingTimeout    = 10 * time.Second
	DefaultConnectTimeout = 10 * time.Second
	DefaultWriteTimeout   = 10 * time.Second
	DefaultMinBackoff     = 250 * time.Millisecond
	DefaultMaxBackoff     = 10 * time.Second
	DefaultSessionExpiry  = time.Hour
	// DefaultInflightBytes bounds, with MaxPayload, the messages the
	// broker may have sent and the client not yet acknowledged: the
	// Receive Maximum is DefaultInflightBytes/MaxPayload, from 16 to
	// 1,024 (64 with the default MaxPayload).
	DefaultInflightBytes = 64 << 20
	// headerRoom is what an MQTT packet adds to its payload at most: the
	// fixed header, a topic of 65,535 bytes and its length, a packet
	// identifier and properties.
	headerRoom = 1<<16 + 1<<10
	// DefaultStatusTopic is the status topic's template; %s is the client
	// ID.
	DefaultStatusTopic = "robotexec/%s/status"
	// Protocol5 and Protocol311 are the values of Config.Protocol.
	Protocol5   = "5"
	Protocol311 = "3.1.1"
	// DefaultDescribeTopic is the topic of the requests to describe
	// themselves that robotexec node list publishes (see
	// Config.DescribeTopic).
	DefaultDescribeTopic = "robotexec/describe"
	// StatusOnline and StatusOffline are the status topic's payloads.
	StatusOnline  = "online"
	StatusOffline = "offline"
)

// Config configures a [Client]. The zero value is valid: a client of the
// broker on 127.0.0.1:1883 with a persistent session under the client ID
// robotexec-HOSTNAME.
type Config struct {
	// Broker is the broker's URL: tcp://host:port (also mqtt://), ssl://
	// (also tls://, mqtts://) for TLS, ws:// or wss:// for WebSocket.
	// Credentials in the URL are the broker's, unless Username and
	// Password are set, and never logged. (optional) Defaults to
	// DefaultBroker, tcp://127.0.0.1:1883.
	Broker string
	// Brokers, instead of Broker, are several brokers' URLs (each as
	// Broker): the nodes of a cluster, or a primary and its standby. The
	// client connects to the first that answers; when a connection is
	// lost it tries the next at once, going round the list, and waits
	// MinBackoff to MaxBackoff only after a round in which none
	// answered. It stays on the broker it reached until that connection
	// is lost. (optional) Defaults to Broker alone; setting both is an
	// error.
	Brokers []string
	// ClientID identifies the client's session at the broker; it must be
	// unique among the broker's clients (the broker disconnects the older
	// of two clients with one ID) and stable across restarts for a
	// persistent session to resume. (optional) Defaults to
	// "robotexec-" + the host name.
	ClientID string
	// Username and Password authenticate the client. The password is
	// sent in clear text unless the URL is ssl:// or wss://, and never
	// appears in logs or errors. (optional) Default to none.
	Username string
	Password string
	// QoS is the default QoS of subscriptions attached to the client
	// (see [Client.QoS] for others) and of its Publishers: 0 at most once, 1 at least once, 2
	// exactly once (to the broker; paho does not remove the duplicates of
	// a redelivery). (optional) Defaults to 0.
	QoS byte
	// Protocol is the MQTT version: Protocol5, MQTT 5, or Protocol311,
	// MQTT 3.1.1, for brokers without MQTT 5. With 3.1.1 the broker cannot
	// be told what MQTT 5 says on the wire (No Local, subscription
	// identifiers, Retain Handling, limits, reason codes): InProcess is
	// off, every message goes through the broker, and a message whose
	// topic several of the client's filters match reaches the
	// subscriptions of each as often as the broker sends it. (optional)
	// Defaults to Protocol5.
	Protocol string
	// CleanSession asks the broker to forget the session on each
	// connection (MQTT 5: Clean Start, and a session that ends with the
	// connection). false, the default, is a persistent session: the
	// broker keeps the client's subscriptions and queues QoS 1 and 2
	// messages while it is away (for SessionExpiry with MQTT 5), and they
	// arrive when it returns. (optional)
	CleanSession bool
	// SessionExpiry is how long the broker keeps a persistent session
	// after the connection ends, in whole seconds (MQTT 5). (optional)
	// Defaults to DefaultSessionExpiry, one hour.
	SessionExpiry time.Duration
	// InProcess makes the client's router in-process: a publication
	// reaches the matching subscriptions of the process directly and the
	// broker for everyone else, and the broker is asked never to send it
	// back (No Local; see [bus.Router]). (optional) Defaults to
	// false: publications go to the broker, which sends them back to the
	// client's subscriptions like to anyone's. Ignored with Protocol311.
	InProcess bool
	// Audience, with InProcess, says which publications anyone beyond
	// the process wants, so that the others stay in the process: the
	// embedded broker knows (broker.Broker.AudienceOf). (optional)
	// Defaults to none: every publication goes to the broker.
	Audience bus.Audience
	// Writable, when not nil, are the topic filters that the broker lets
	// the client publish to (with the embedded broker, its user's write
	// filters): a publication to any other topic fails at once with
	// ErrForbidden and is counted, never sent to a broker that would
	// disconnect the client for it. (optional) Defaults to nil: every
	// topic.
	Writable []string
	// StartPaused holds incoming messages, delivering and acknowledging
	// none, until [Client.Resume]. With a persistent session the broker
	// sends the messages queued during the client's absence right after
	// connecting, maybe before the subscriptions are attached (they would
	// then match none and be dropped): dial paused, attach, then Resume.
	// (optional) Defaults to false.
	StartPaused bool
	// TLS configures TLS for ssl:// and wss:// brokers from files.
	// (optional) Defaults to the system's roots and no client certificate.
	TLS TLSFiles
	// TLSConfig, when set, is used as is instead of TLS. (optional)
	TLSConfig *tls.Config
	// MaxPayload is the largest payload, in bytes, in both directions: a
	// larger one received is dropped and counted (reason too_large) on
	// each subscription it would have gone to, without the client ever
	// holding more of it than its topic; a larger publication is refused
	// at Publish with bus.ErrTooLarge and counted
	// (Stats.PublishFailed), reaching no one, so that a broker that
	// would refuse it never gets it. With MQTT 5 the broker is told, as
	// the client's Maximum Packet Size. (optional) Defaults to
	// DefaultMaxPayload, 1 MiB; at most 255 MiB.
	MaxPayload int
	// ReceiveMaximum bounds the QoS 1 and 2 messages that the broker may
	// have sent the client and the client not yet acknowledged (MQTT 5).
	// The client acknowledges a message once a subscription took it, so
	// that a full subscription with the Block policy holds the broker
	// back: memory stays bounded by ReceiveMaximum × MaxPayload.
	// (optional) Defaults to DefaultInflightBytes / MaxPayload, from 16
	// to 1,024.
	ReceiveMaximum int
	// MaxPendingQoS0 bounds the QoS 0 messages received and not yet
	// handed to subscriptions, which happens only while a subscription
	// with the Block policy is full; newer QoS 0 messages are dropped and
	// counted (reason queue_full). QoS 1 and 2 messages are not dropped:
	// they are acknowledged only once handed over, so the broker's
	// in-flight window holds them back instead. (optional) Defaults to
	// DefaultMaxPendingQoS0.
	MaxPendingQoS0 int
	// StatusTopic is where the client keeps its status, retained:
	// "online" after each connection, "offline" on Close, and "offline"
	// as its last will (QoS 1), which the broker publishes when the
	// client vanishes without Close. (optional) Defaults to
	// "robotexec/<ClientID>/status"; "-" turns the status off.
	StatusTopic string
	// OnConnect, when not nil, is called with the broker's URL (without
	// credentials) each time the client has connected and subscribed
	// again, from the client's connection goroutine: it must not wait
	// for the client. robotexec run updates its graph topic, which names
	// the broker. (optional)
	OnConnect func(broker string)
	// DescribeTopic, when not "", is a topic the client subscribes to:
	// a message on it makes the client publish its online status and
	// its kept messages (Keep) again (once for the requests that come
	// while it does), so that a
	// client of another node of a cluster that does not share retained
	// messages between its nodes (ejabberd) gets them live. robotexec
	// node list asks on DefaultDescribeTopic. (optional) Defaults to
	// none.
	DescribeTopic string
	// Logger receives the client's logs. (optional) Defaults to
	// slog.Default().
	Logger *slog.Logger
	// KeepAlive is the interval of MQTT keep-alive pings, in whole
	// seconds (at least 1 s); a broker that does not answer a ping within
	// PingTimeout (MQTT 3.1.1; with MQTT 5, by the next ping) is
	// considered gone. Use at least 2 s with the embedded
	// broker, which drops a client silent for 1.5 × KeepAlive rounded
	// down to whole seconds. (optional) Default to DefaultKeepAlive (30 s)
	// and DefaultPingTimeout (10 s).
	KeepAlive   time.Duration
	PingTimeout time.Duration
	// ConnectTimeout bounds one connection attempt (dial, TLS, CONNECT).
	// (optional) Defaults to DefaultConnectTimeout, 10 s.
	ConnectTimeout time.Duration
	// WriteTimeout bounds each write to the network (of at most 256 KiB);
	// a write that takes longer counts as a lost connection. (optional)
	// Defaults to DefaultWriteTimeout, 10 s.
	WriteTimeout time.Duration
	// Linger is how long a publication may wait for others to go to the
	// broker in the same write: the first publication after a write waits
	// up to Linger, or until MaxLingerBatch publications wait, and those
	// published meanwhile go with it. The client's goroutines, the
	// broker's and the system calls then wake once a write instead of
	// once a publication, which a process whose callbacks keep every CPU
	// busy feels. It delays what goes through the broker by up to Linger,
	// and PublishWait's answers with it; deliveries in the process
	// (InProcess) are not delayed. (optional) Defaults to 0: a
	// publication goes at once; at most MaxLinger.
	Linger time.Duration
	// MinBackoff and MaxBackoff bound the wait between connection
	// attempts: it starts at MinBackoff and doubles up to MaxBackoff
	// while the broker cannot be reached, with jitter; after a lost
	// connection the first attempt is at once. (optional) Default to
	// DefaultMinBackoff (250 ms) and DefaultMaxBackoff (10 s).
	MinBackoff time.Duration
	MaxBackoff time.Duration
}

// settings is a validated Config with defaults applied.
type settings struct {
	Config
	v5      bool        // MQTT 5
	brokers []*endpoint // Brokers, or Broker alone
	tls     *tls.Config
}

func (cfg Config) settings() (*settings, error) {
	s := &settings{Config: cfg}
	errs := []error{s.parseBrokers()}
	if s.ClientID == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "localhost"
		}
		s.ClientID = "robotexec-" + host
	}
	if s.QoS > 2 {
		errs = append(errs, fmt.Errorf("mqtt: QoS %d is not 0, 1 or 2", s.QoS))
	}
	for _, f := range s.Writable {
		if err := bus.ValidateFilter(f); err != nil {
			errs = append(errs, fmt.Errorf("mqtt: Writable: %w", err))
		}
	}
	errs = append(errs, s.protocol(), s.limits())
	if s.MaxPendingQoS0 <= 0 {
		s.MaxPendingQoS0 = DefaultMaxPendingQoS0
	}
	errs = append(errs, s.topics()...)
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	s.durations()
	switch {
	case s.TLSConfig != nil:
		s.tls = s.TLSConfig
	case !s.TLS.Empty():
		t, err := s.TLS.Config()
		errs = append(errs, err)
		s.tls = t
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// protocol checks Protocol, and turns InProcess off with MQTT 3.1.1.
func (s *settings) protocol() error {
	switch s.Protocol {
	case "", Protocol5:
		s.Protocol, s.v5 = Protocol5, true
	case Protocol311:
		s.InProcess = false
	default:
		return fmt.Errorf("mqtt: protocol %q is not %s or %s", s.Protocol, Protocol5, Protocol311)
	}
	return nil
}

// limits applies the defaults of MaxPayload and ReceiveMaximum.
func (s *settings) limits() error {
	switch {
	case s.MaxPayload == 0:
		s.MaxPayload = DefaultMaxPayload
	case s.MaxPayload < 0 || s.MaxPayload > maxPacket-headerRoom:
		return fmt.Errorf("mqtt: MaxPayload %d is not within 1..%d", s.MaxPayload, maxPacket-headerRoom)
	}
	switch {
	case s.ReceiveMaximum == 0:
		s.ReceiveMaximum = min(max(DefaultInflightBytes/s.MaxPayload, 16), 1024)
	case s.ReceiveMaximum < 0 || s.ReceiveMaximum > 65535:
		return fmt.Errorf("mqtt: ReceiveMaximum %d is not within 1..65535", s.ReceiveMaximum)
	}
	return nil
}

// maxPacket is MQTT's largest packet: a remaining length of 268,435,455
// bytes and its fixed header.
const maxPacket = 268435455 + 5

// packetLimit is the largest remaining length of a packet the client
// accepts: MaxPayload and room for its headers.
func (s *settings) packetLimit() int { return min(s.MaxPayload+headerRoom, maxPacket-5) }

// topics sets and checks the client's own topics: its status (a default
// from the client ID, or none with "-").
func (s *settings) topics() []error {
	var errs []error
	switch s.StatusTopic {
	case "":
		s.StatusTopic = fmt.Sprintf(DefaultStatusTopic, s.ClientID)
		if err := bus.ValidateTopic(s.StatusTopic); err != nil {
			errs = append(errs, fmt.Errorf("mqtt: client ID %q makes no valid status topic: %w", s.ClientID, err))
		}
	case "-":
		s.StatusTopic = ""
	default:
		if err := bus.ValidateTopic(s.StatusTopic); err != nil {
			errs = append(errs, fmt.Errorf("mqtt: status topic: %w", err))
		}
	}
	return errs
}

// durations applies the default durations.
func (s *settings) durations() {
	defaultDuration(&s.KeepAlive, DefaultKeepAlive)
	if s.KeepAlive < time.Second {
		// paho keeps whole seconds; under 1 s would turn keep-alive off.
		s.KeepAlive = time.Second
	}
	defaultDuration(&s.PingTimeout, DefaultPingTimeout)
	defaultDuration(&s.ConnectTimeout, DefaultConnectTimeout)
	defaultDuration(&s.WriteTimeout, DefaultWriteTimeout)
	s.Linger = min(max(s.Linger, 0), MaxLinger)
	defaultDuration(&s.SessionExpiry, DefaultSessionExpiry)
	defaultDuration(&s.MinBackoff, DefaultMinBackoff)
	defaultDuration(&s.MaxBackoff, DefaultMaxBackoff)
	if s.MaxBackoff < s.MinBackoff {
		s.MaxBackoff = s.MinBackoff
	}
}

func defaultDuration(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}
