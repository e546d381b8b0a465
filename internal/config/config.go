package config

import (
	"fmt"
	"os"
	"reflect"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/robotexec/robotexec/internal/smallfile"
	"github.com/robotexec/robotexec/subscribers"
)

// Defaults and allowed values of the configuration.
const (
	// EmbeddedBroker is the value of MQTT.Broker that runs a broker in the
	// process; it is the default.
	EmbeddedBroker = "embedded"
	// DefaultListen is where the embedded broker listens by default.
	DefaultListen = "127.0.0.1:1883"
	// DefaultQoS is the default MQTT QoS of subscriptions and publications.
	DefaultQoS = 1
	// DefaultGCHeadroom is the default of executor.gc_headroom.
	DefaultGCHeadroom Size = 32 << 20
	// DefaultClockTopic is the default of executor.clock_topic.
	DefaultClockTopic = "clock"
	// DefaultMaxPayload is the default of mqtt.max_payload.
	DefaultMaxPayload Size = 1 << 20
	// MaxMaxPayload is the largest mqtt.max_payload: MQTT's largest
	// packet is 256 MiB, headers included.
	MaxMaxPayload Size = 255 << 20
	// DefaultDrainTimeout is the default of executor.drain_timeout.
	DefaultDrainTimeout = 10 * time.Second
	// MaxLinger is the longest mqtt.linger.
	MaxLinger = time.Second
	// DefaultKeepAlive is the default MQTT keep-alive.
	DefaultKeepAlive = 30 * time.Second
	// Protocol5 and Protocol311 are the values of MQTT.Protocol.
	Protocol5   = "5"
	Protocol311 = "3.1.1"
	// DefaultSessionExpiry is the default of mqtt.session_expiry.
	DefaultSessionExpiry = time.Hour
	// MaxSessionExpiry is the largest mqtt.session_expiry: MQTT 5 says it
	// in seconds, on 32 bits.
	MaxSessionExpiry = 4294967295 * time.Second
	// DefaultMaxConnections is the default of mqtt.max_connections.
	DefaultMaxConnections = 1000
	// OverflowDropOldest, OverflowDropNewest and OverflowBlock are the
	// values of Executor.Overflow: drop the oldest queued message (the
	// default, ROS KEEP_LAST), drop the new one, or block the producer.
	OverflowDropOldest = "drop_oldest"
	OverflowDropNewest = "drop_newest"
	OverflowBlock      = "block"
	// TimerSourcePrecise and TimerSourceGo are the values of
	// Executor.TimerSource: timers driven by a dedicated thread on a
	// timerfd (precise, the default, on Linux), or by Go's runtime timers.
	TimerSourcePrecise = "precise"
	TimerSourceGo      = "go"
)

// Config is a loaded config.yaml, defaults applied. Its keys are those of
// the yaml tags; any other key is an error.
type Config struct {
	// File is the file it was loaded from, as named to Load or Parse.
	File string `yaml:"-"`
	// Executor configures the executor. (optional)
	Executor Executor `yaml:"executor"`
	// MQTT configures the broker connection. (optional) Defaults to the
	// embedded broker.
	MQTT MQTT `yaml:"mqtt"`
	// Metrics configures the metrics and health endpoint. (optional)
	// Defaults to none.
	Metrics Metrics `yaml:"metrics"`
	// View configures the live view, a Foxglove WebSocket server.
	// (optional) Defaults to none.
	View View `yaml:"view"`
	// Nodes are the nodes to run, in file order. (optional) Defaults to
	// none.
	Nodes []Node `yaml:"nodes"`

	src *source
}

// MQTT is the mqtt: section.
type MQTT struct {
	// Broker is EmbeddedBroker, to run a broker in the process, or the URL
	// of a broker: tcp://host:port (also mqtt://), ssl://host:port (also
	// tls://, mqtts://, tcps://), ws:// or wss://. All but WebSocket URLs
	// need a port. With a list of brokers it is the first (see Brokers).
	// (optional) Defaults to EmbeddedBroker.
	Broker string `yaml:"-"`
	// Brokers is mqtt.broker: one broker (EmbeddedBroker or a URL), or a
	// list of URLs of the nodes of one cluster, or of a primary and its
	// standby. robotexec connects to the first that answers and, when
	// the connection is lost, tries the next at once, going round the
	// list. After Check it holds at least one, and Broker is its first;
	// a program that sets only Broker gets Brokers of that one.
	// (optional) Defaults to EmbeddedBroker.
	Brokers BrokerList `yaml:"broker"`
	// Listen is the host:port where the embedded broker listens; only
	// used with EmbeddedBroker. (optional) Defaults to DefaultListen,
	// 127.0.0.1:1883.
	Listen string `yaml:"listen"`
	// ClientID identifies the session at the broker; it must be unique
	// among the broker's clients and stable across restarts. (optional)
	// Defaults to "robotexec-" + the host name (HOSTNAME, else
	// os.Hostname).
	ClientID string `yaml:"client_id"`
	// Username and Password authenticate the client. (optional) Default
	// to none.
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	// QoS is the default QoS of subscriptions and publications: 0, 1 or
	// 2. (optional) Defaults to DefaultQoS, 1.
	QoS int `yaml:"qos"`
	// Protocol is the MQTT version spoken to the broker: Protocol5 or
	// Protocol311, for brokers without MQTT 5; with 3.1.1 every message
	// goes through the broker (executor.in_process is off). (optional)
	// Defaults to Protocol5. YAML's 5 (a number) is Protocol5.
	Protocol string `yaml:"protocol"`
	// CleanSession asks the broker to forget the session on each
	// connection; false keeps a persistent session, whose QoS 1 and 2
	// messages survive reconnects (MQTT 5: Clean Start false, with
	// SessionExpiry). (optional) Defaults to false.
	CleanSession bool `yaml:"clean_session"`
	// SessionExpiry is how long the broker keeps the session of a
	// disconnected instance (MQTT 5), in whole seconds from 1 s.
	// (optional) Defaults to DefaultSessionExpiry, one hour; at most
	// MaxSessionExpiry.
	SessionExpiry time.Duration `yaml:"session_expiry"`
	// KeepAlive is the MQTT keep-alive, in whole seconds: the client
	// pings when it has sent nothing for this long, and a dead link is
	// noticed within about 1.5 times it (the broker's side) to twice it
	// (the client's, with a ping timeout of at most KeepAlive).
	// (optional) Defaults to DefaultKeepAlive, 30 s; from 1 s to 65535 s.
	KeepAlive time.Duration `yaml:"keepalive"`
	// MaxPayload is the largest payload in both directions: a larger
	// publication is refused at Publish with an error and counted, never
	// sent; a larger message received is dropped and counted. (optional)
	// Defaults to DefaultMaxPayload, 1 MiB; from 1 B to MaxMaxPayload.
	MaxPayload Size `yaml:"max_payload"`
	// Linger is how long a publication bound for the broker may wait for
	// others to go in the same write (see mqtt.Config.Linger): fewer
	// wake-ups of the client and the broker while callbacks keep the CPUs
	// busy, for up to Linger more latency through the broker; deliveries
	// in the process are not delayed. (optional) Defaults to 0: at once;
	// at most MaxLinger, 1 s.
	Linger time.Duration `yaml:"linger"`
	// TLS names the PEM files of a TLS connection; it needs a TLS broker
	// URL (ssl://, tls://, mqtts://, tcps://, wss://). (optional) Defaults
	// to nil: the system's roots and no client certificate.
	TLS *TLS `yaml:"tls"`
	// Users are who may connect to the embedded broker, with the topics
	// each may read and write; only with EmbeddedBroker. (optional)
	// Defaults to none.
	Users []User `yaml:"users"`
	// AllowAnonymous lets clients without a username connect to the
	// embedded broker, with access to every topic. (optional) Defaults to
	// true with no Users on a loopback Listen, else false; a non-loopback
	// Listen without Users is an error unless it is true. See
	// AnonymousAllowed.
	AllowAnonymous *bool `yaml:"allow_anonymous"`
	// MaxConnections bounds the connections the embedded broker holds:
	// further ones are refused and counted. (optional) Defaults to
	// DefaultMaxConnections, 1,000; only with EmbeddedBroker.
	MaxConnections int `yaml:"max_connections"`
}

// BrokerList is mqtt.broker's value: a YAML list of broker URLs, or one
// value, which is a list of one.
type BrokerList []string

// User is an entry of mqtt.users: a user of the embedded broker.
type User struct {
	// Username and Password are the user's credentials. Required.
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	// Read and Write are MQTT topic filters: the topics the user may read
	// (subscribe to and receive) and write (publish to). (optional)
	// Default to none.
	Read  []string `yaml:"read"`
	Write []string `yaml:"write"`
}

// AnonymousAllowed reports whether the embedded broker lets clients
// without a username in: AllowAnonymous when set, else whether there are
// no users and the broker listens on loopback only.
func (m MQTT) AnonymousAllowed() bool {
	if m.AllowAnonymous != nil {
		return *m.AllowAnonymous
	}
	return len(m.Users) == 0 && loopbackListen(m.Listen)
}

// TLS is the mqtt.tls: section. Relative paths are resolved against the
// directory of the config file.
type TLS struct {
	// CA is the file of the certificate authorities that sign the
	// broker's certificate. (optional) Defaults to the system's roots.
	CA string `yaml:"ca"`
	// Cert and Key are the client's certificate and private key.
	// (optional) Set both or neither.
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
}

// Metrics is the metrics: section.
type Metrics struct {
	// Listen is the host:port of the HTTP server of Prometheus /metrics,
	// /healthz and pprof. (optional) Defaults to "": no server.
	Listen string `yaml:"listen"`
}

// View is the view: section: the live view, a WebSocket server of the
// Foxglove WebSocket protocol (foxglove.websocket.v1).
type View struct {
	// Listen is the host:port of the live view. (optional) Defaults to
	// "": no live view.
	Listen string `yaml:"listen"`
	// Users are who may connect to the live view (HTTP basic
	// authentication), with the topics each may read (see and subscribe)
	// and write (publish from a panel). (optional) Defaults to none.
	Users []User `yaml:"users"`
	// AllowAnonymous lets viewers without credentials in, to see every
	// topic, as mqtt.allow_anonymous does for the embedded broker.
	// (optional) Defaults to true with no Users on a loopback Listen, else
	// false; a non-loopback Listen without Users is an error unless it is
	// true. See AnonymousAllowed.
	AllowAnonymous *bool `yaml:"allow_anonymous"`
	// MaxTopics bounds the topics the live view shows at once: past it,
	// the least recently seen topic's channels are unadvertised to make
	// room, and counted (robotexec_view_evicted_total). (optional)
	// Defaults to 10,000, as a built-in node's max_topics.
	MaxTopics int `yaml:"max_topics"`
	// AllowedOrigins are the web origins, scheme://host[:port] (such as
	// https://app.foxglove.dev), whose pages may connect to the live view
	// from a browser, besides the view's own page. A browser names the
	// page that opens a WebSocket in its Origin header; the view refuses
	// (403) every other origin, so that a page the operator happens to
	// have open cannot reach the robot. Clients that send no Origin are
	// not browsers and are not refused for it. Check puts each in the
	// form a browser sends (ParseOrigin). (optional) Defaults to none.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// AnonymousPublish lets anonymous viewers publish (clientPublish) on
	// every topic. (optional) Defaults to false: only a user whose write
	// filters match a topic publishes on it; anonymous viewers watch.
	AnonymousPublish bool `yaml:"anonymous_publish"`
}

// AnonymousAllowed reports whether the live view lets viewers without
// credentials in: AllowAnonymous when set, else whether there are no
// users and the view listens on loopback only.
func (v View) AnonymousAllowed() bool {
	if v.AllowAnonymous != nil {
		return *v.AllowAnonymous
	}
	return len(v.Users) == 0 && loopbackListen(v.Listen)
}

// Node is one entry of the nodes: list.
type Node struct {
	// Name names the node, in logs and metrics too: unique, of letters,
	// digits, _ and -. Required.
	Name string `yaml:"name"`
	// Type is the node's registered type; Parse does not check it (the
	// registry lives in package nodes): report an unknown type with
	// Errorf("type", ...). Required.
	Type string `yaml:"type"`
	// Group names a callback group that the node shares with the other
	// nodes of the same group. (optional) Defaults to "": the node's own
	// group.
	Group string `yaml:"group"`
	// Priority is the priority of the node's callbacks: among the
	// subscriptions ready to run, those of the highest priority run
	// first, after the due timers; no callback starves (docs/design.md,
	// Priorities). (optional) Defaults to 0, the lowest; negative is an
	// error.
	Priority int `yaml:"priority"`
	// Params are the node's params, for its type to decode. (optional)
	Params Params `yaml:"params"`
	// Line is the line of the node's entry in the file.
	Line int `yaml:"-"`
	// Index is the node's position in the nodes: list, from 0.
	Index int `yaml:"-"`

	src *source
}

// Errorf returns an error located at field of the node, with the text
// FILE:LINE: nodes[I].FIELD: MSG, for problems Parse cannot see, such as
// Errorf("type", "unknown node type %q", n.Type). field may reach into the
// params ("params.period"); the line is that of the field, else of the
// closest enclosing value that has one.
func (n Node) Errorf(field, format string, args ...any) *Error {
	path := index("nodes", n.Index)
	if field != "" {
		path = joinPath(path, field)
	}
	line := n.src.line(path)
	if line == 0 {
		line = n.Line
	}
	return &Error{File: n.src.name(), Line: line, Field: path, Msg: fmt.Sprintf(format, args...)}
}

// Errorf returns an error located at field of the config (a path such as
// "mqtt.broker" or "nodes[2].params.topic"), with the text FILE:LINE:
// FIELD: MSG, for problems found after Parse, such as a broker that refuses
// the credentials. The line is that of the field, else of the closest
// enclosing value that has one, else 0.
func (c *Config) Errorf(field, format string, args ...any) *Error {
	return &Error{File: c.File, Line: c.src.line(field), Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Load reads the config file at path and parses it with Parse, expanding
// ${VAR} from the process's environment. It also checks that the TLS files
// are regular files of at most 1 MiB. An unreadable file is an error of
// the form "config.yaml: no such file or directory" that wraps the
// *fs.PathError; so is one that is not a regular file or is over 1 MiB
// ("config.yaml: is not a regular file (a named pipe)"), without reading
// it.
func Load(path string) (*Config, error) {
	if err := smallfile.Check(path); err != nil {
		return nil, Join(&Error{File: path, Msg: err.Error(), Err: err})
	}
	data, err := smallfile.Read(path)
	if err != nil {
		msg := err.Error()
		if pe, ok := err.(*os.PathError); ok {
			msg = pe.Err.Error()
		}
		return nil, Join(&Error{File: path, Msg: msg, Err: err})
	}
	cfg, err := Parse(path, data, nil)
	if cfg == nil {
		return nil, err
	}
	return cfg, Join(err, cfg.checkFiles())
}

// Parse parses data, the content of config file file (named in errors),
// applies the defaults and checks the result. ${VAR} and ${VAR:-default} in
// every scalar value, node params included, expand from lookupEnv
// (os.LookupEnv when nil); HOSTNAME falls back to os.Hostname when unset,
// because shells do not export it.
//
// Parse reports every problem it finds, as *Error values joined in line
// order (see Join and Errors). When the YAML itself is malformed it returns
// a nil Config. Otherwise it returns the Config even with an error: invalid
// values are left at their defaults and invalid nodes are kept, so that a
// caller can check what Parse cannot (node types, node params) and report
// those problems together with Parse's, by Join. An empty document is a
// valid config of defaults only.
func Parse(file string, data []byte, lookupEnv func(string) (string, bool)) (*Config, error) {
	root, errs, ok := parseYAML(file, data)
	if !ok {
		return nil, joinErrors(errs)
	}
	lookup := envLookup(lookupEnv)
	cfg := &Config{
		File:     file,
		Executor: Executor{QueueDepth: subscribers.DefaultDepth, InProcess: true, GCHeadroom: DefaultGCHeadroom, ClockTopic: DefaultClockTopic, DrainTimeout: DefaultDrainTimeout},
		MQTT: MQTT{
			Broker:         EmbeddedBroker,
			Listen:         DefaultListen,
			ClientID:       defaultClientID(lookup),
			QoS:            DefaultQoS,
			Protocol:       Protocol5,
			SessionExpiry:  DefaultSessionExpiry,
			KeepAlive:      DefaultKeepAlive,
			MaxPayload:     DefaultMaxPayload,
			MaxConnections: DefaultMaxConnections,
		},
	}
	t := newTree(file, root, lookup)
	t.errs = errs
	t.lines = map[string]int{}
	t.src = &source{file: file, lines: t.lines}
	t.failed = map[string]bool{}
	switch {
	case root == nil || isNull(root):
	case root.Kind != yaml.MappingNode:
		t.errorf(root, "", "the document must be a mapping, not %s", describe(root))
	default:
		t.value(root, "", reflect.ValueOf(cfg).Elem())
	}
	cfg.src = t.src
	t.check(cfg)
	return cfg, joinErrors(t.errs)
}

func defaultClientID(lookup func(string) (string, bool)) string {
	host, ok := lookup("HOSTNAME")
	if !ok || host == "" {
		host = "localhost"
	}
	return "robotexec-" + host
}
