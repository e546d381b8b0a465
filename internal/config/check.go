package config

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// check applies the defaults of empty strings, locates the nodes, resolves
// the TLS paths and reports the values that decode but are not allowed.
func (t *tree) check(c *Config) {
	e := &c.Executor
	if e.Workers < 0 {
		t.errorAt("executor.workers", "must be 0 (one per CPU) or more, not %d", e.Workers)
	}
	if e.PriorityWorkers < 0 {
		t.errorAt("executor.priority_workers", "must be 0 (none) or more, not %d", e.PriorityWorkers)
	}
	if e.Realtime && e.PriorityWorkers == 0 {
		t.errorAt("executor.realtime", "needs executor.priority_workers: the real-time class is theirs")
	}
	t.checkProcs(e)
	if e.QueueDepth < 1 {
		t.errorAt("executor.queue_depth", "must be 1 or more, not %d", e.QueueDepth)
	}
	switch e.Overflow {
	case "", OverflowDropOldest, OverflowDropNewest, OverflowBlock:
	default:
		t.errorAt("executor.overflow", "must be %s, %s or %s, not %s", OverflowDropOldest, OverflowDropNewest, OverflowBlock, quote(e.Overflow))
	}
	if e.ClockTopic == "" {
		e.ClockTopic = DefaultClockTopic
	} else if strings.ContainsAny(e.ClockTopic, "+#\x00") {
		t.errorAt("executor.clock_topic", "must be a topic name, without wildcards, not %s", quote(e.ClockTopic))
	}
	if e.DrainTimeout < time.Millisecond {
		t.errorAt("executor.drain_timeout", "must be 1ms or more, not %v", e.DrainTimeout)
	}
	switch e.TimerSource {
	case "":
		e.TimerSource = TimerSourcePrecise
	case TimerSourcePrecise, TimerSourceGo:
	default:
		t.errorAt("executor.timer_source", "must be %s or %s, not %s", TimerSourcePrecise, TimerSourceGo, quote(e.TimerSource))
	}

	m := &c.MQTT
	scheme, brokerOK := t.checkBrokers(m)
	if m.Listen == "" {
		m.Listen = DefaultListen
	}
	listenErr := checkHostPort(m.Listen, "127.0.0.1:1883")
	if listenErr != "" {
		t.errorAt("mqtt.listen", "%s", listenErr)
	}
	if m.ClientID == "" {
		m.ClientID = defaultClientID(t.lookup)
	}
	if m.QoS < 0 || m.QoS > 2 {
		t.errorAt("mqtt.qos", "must be 0, 1 or 2, not %d", m.QoS)
	}
	t.checkSession(m)
	if m.TLS != nil {
		t.checkTLS(c, scheme, brokerOK)
	}
	t.checkUsers(c, listenErr == "")

	if c.Metrics.Listen != "" {
		if msg := checkHostPort(c.Metrics.Listen, "127.0.0.1:9090"); msg != "" {
			t.errorAt("metrics.listen", "%s", msg)
		}
	}
	t.checkView(&c.View)
	t.checkNodes(c)
}

// checkSession checks the MQTT protocol, session and limits.
func (t *tree) checkSession(m *MQTT) {
	switch m.Protocol {
	case Protocol5, Protocol311:
	case "", "5.0":
		m.Protocol = Protocol5
	case "3", "4":
		t.errorAt("mqtt.protocol", "must be %s or %s, not %s (MQTT 3.1.1 is %s)", Protocol5, Protocol311, quote(m.Protocol), Protocol311)
	default:
		t.errorAt("mqtt.protocol", "must be %s or %s, not %s", Protocol5, Protocol311, quote(m.Protocol))
	}
	switch k := m.KeepAlive; {
	case k < time.Second || k > 65535*time.Second:
		t.errorAt("mqtt.keepalive", "must be from 1s to 18h12m15s (65535 s), not %v", k)
	case k%time.Second != 0:
		t.errorAt("mqtt.keepalive", "must be whole seconds, not %v", k)
	}
	switch e := m.SessionExpiry; {
	case e < time.Second || e > MaxSessionExpiry:
		// 0 s would end the session with the connection: what
		// clean_session: true says.
		t.errorAt("mqtt.session_expiry", "must be from 1s to %v, not %v", MaxSessionExpiry, e)
	case e%time.Second != 0:
		t.errorAt("mqtt.session_expiry", "must be whole seconds, not %v", e)
	}
	if m.MaxPayload < 1 || m.MaxPayload > MaxMaxPayload {
		t.errorAt("mqtt.max_payload", "must be from 1B to %v, not %v", MaxMaxPayload, m.MaxPayload)
	}
	if m.Linger < 0 || m.Linger > MaxLinger {
		t.errorAt("mqtt.linger", "must be from 0s to %v, not %v", MaxLinger, m.Linger)
	}
	if m.MaxConnections < 1 {
		t.errorAt("mqtt.max_connections", "must be 1 or more, not %d", m.MaxConnections)
	}
}

// checkNodes locates the nodes and checks their names and types.
func (t *tree) checkNodes(c *Config) {
	first := map[string]int{} // node name → line
	for i := range c.Nodes {
		n := &c.Nodes[i]
		p := index("nodes", i)
		n.Index, n.Line, n.src = i, t.lines[p], t.src
		if n.Params.path == "" { // no params: key
			n.Params = Params{src: t.src, path: p + ".params"}
		}
		if t.failed[p] {
			continue // not a mapping: reported already
		}
		prev, dup := first[n.Name]
		switch {
		case n.Name == "":
			t.errorAt(p+".name", "required")
		case !validName(n.Name):
			t.errorAt(p+".name", "%s is not a valid name: use letters, digits, _ and -", quote(n.Name))
		case dup:
			t.errorAt(p+".name", "duplicate node name %s (first at line %d)", quote(n.Name), prev)
		default:
			first[n.Name] = t.src.line(p + ".name")
		}
		if n.Type == "" {
			t.errorAt(p+".type", "required")
		}
		if n.Group != "" && !validName(n.Group) {
			t.errorAt(p+".group", "%s is not a valid name: use letters, digits, _ and -", quote(n.Group))
		}
		if n.Priority < 0 {
			t.errorAt(p+".priority", "%d is negative: 0 is the lowest priority", n.Priority)
		}
	}
}

func (t *tree) checkTLS(c *Config, scheme string, brokerOK bool) {
	tls := c.MQTT.TLS
	switch {
	case tls.Cert != "" && tls.Key == "":
		t.errorAt("mqtt.tls.key", "required with cert")
	case tls.Key != "" && tls.Cert == "":
		t.errorAt("mqtt.tls.cert", "required with key")
	}
	switch {
	case c.MQTT.Broker == EmbeddedBroker:
		t.errorAt("mqtt.tls", "the embedded broker does not use TLS; set broker to an ssl://, mqtts:// or wss:// URL")
	case brokerOK && !tlsScheme(scheme):
		t.errorAt("mqtt.tls", "broker %s does not use TLS; use ssl://, mqtts:// or wss://", quote(redact(c.MQTT.Broker)))
	}
	if c.File == "" {
		return
	}
	dir := filepath.Dir(c.File)
	for _, p := range []*string{&tls.CA, &tls.Cert, &tls.Key} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
}

func (t *tree) errorAt(path, format string, args ...any) {
	t.errs = append(t.errs, &Error{File: t.file, Line: t.src.line(path), Field: path, Msg: fmt.Sprintf(format, args...)})
}

// checkBrokers checks mqtt.broker, one broker or a list, and sets Broker
// to its first (Brokers to Broker when a program set only that). It
// returns the first's scheme, and whether every broker is valid.
func (t *tree) checkBrokers(m *MQTT) (scheme string, ok bool) {
	switch {
	case len(m.Brokers) == 1 && m.Brokers[0] == "", m.Brokers == nil && m.Broker == "":
		// broker: "" (or ${VAR:-}) is the default, as for every string.
		m.Brokers = BrokerList{EmbeddedBroker}
	case m.Brokers == nil:
		m.Brokers = BrokerList{m.Broker}
	case len(m.Brokers) == 0:
		t.errorAt("mqtt.broker", "must name a broker: %q, a URL, or a list of URLs", EmbeddedBroker)
		m.Brokers = BrokerList{EmbeddedBroker}
	}
	m.Broker = m.Brokers[0]
	if len(m.Brokers) == 1 {
		scheme, msg := checkBroker(m.Broker)
		if msg != "" {
			t.errorAt("mqtt.broker", "%s", msg)
		}
		return scheme, msg == ""
	}
	ok = true
	seen := map[string]bool{}
	for i, b := range m.Brokers {
		path := index("mqtt.broker", i)
		s, msg := checkBroker(b)
		switch {
		case b == EmbeddedBroker:
			msg = fmt.Sprintf("%q cannot be in a list: a list names the URLs of external brokers", EmbeddedBroker)
		case msg == "" && seen[b]:
			msg = fmt.Sprintf("%s is in the list twice", quote(redact(b)))
		case msg == "" && i > 0 && tlsScheme(s) != tlsScheme(scheme):
			msg = fmt.Sprintf("%s: the brokers of a list all use TLS (ssl://, mqtts://, wss://) or none does", quote(redact(b)))
		}
		seen[b] = true
		if i == 0 {
			scheme = s
		}
		if msg != "" {
			t.errorAt(path, "%s", msg)
			ok = false
		}
	}
	return scheme, ok
}

// checkBroker returns the scheme of broker URL s ("" for EmbeddedBroker),
// or why s is not valid.
func checkBroker(s string) (scheme, msg string) {
	if s == EmbeddedBroker {
		return "", ""
	}
	if !strings.Contains(s, "://") {
		return "", fmt.Sprintf("must be %q or a URL such as tcp://host:1883, not %s", EmbeddedBroker, quote(redact(s)))
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Sprintf("%s is not a valid URL", quote(redact(s)))
	}
	scheme = strings.ToLower(u.Scheme)
	shown := quote(u.Redacted())
	switch scheme {
	case "tcp", "mqtt", "ssl", "tls", "mqtts", "tcps", "ws", "wss":
	default:
		return "", fmt.Sprintf("%s: scheme %q is not tcp, mqtt, ssl, tls, mqtts, tcps, ws or wss", shown, u.Scheme)
	}
	if u.Hostname() == "" {
		return "", fmt.Sprintf("%s has no host", shown)
	}
	if scheme != "ws" && scheme != "wss" && u.Port() == "" {
		port := "1883"
		if tlsScheme(scheme) {
			port = "8883"
		}
		return "", fmt.Sprintf("%s has no port (e.g. %s://%s:%s)", shown, scheme, u.Hostname(), port)
	}
	if p := u.Port(); p != "" {
		if _, err := strconv.ParseUint(p, 10, 16); err != nil {
			return "", fmt.Sprintf("%s has no valid port (0 to 65535)", shown)
		}
	}
	return scheme, ""
}

func tlsScheme(scheme string) bool {
	switch scheme {
	case "ssl", "tls", "mqtts", "tcps", "wss":
		return true
	}
	return false
}

// checkHostPort returns why s is not a host:port address, or "".
func checkHostPort(s, example string) string {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Sprintf("must be host:port (e.g. %s), not %s", example, quote(s))
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Sprintf("%s has no valid port (0 to 65535)", quote(s))
	}
	return ""
}

// redact hides the password of a broker URL.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil && strings.Contains(s, "://") {
		return u.Redacted()
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		scheme, _, ok := strings.Cut(s, "://")
		if ok {
			return scheme + "://xxxxx" + s[i:]
		}
		return "xxxxx" + s[i:]
	}
	return s
}

// validName reports whether s is a name of letters, digits, _ and -.
func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}
