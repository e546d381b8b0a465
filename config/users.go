package config

import (
	"net"
	"strings"
)

// checkUsers checks mqtt.users and mqtt.allow_anonymous: the embedded
// broker's only, complete, and required on a non-loopback listen unless
// anonymous clients are allowed explicitly. The users' topic filters are
// checked by the caller of Load, which knows MQTT's filter syntax.
// listenOK is whether mqtt.listen is a valid host:port.
func (t *tree) checkUsers(c *Config, listenOK bool) {
	m := &c.MQTT
	if m.Broker != EmbeddedBroker {
		if len(m.Users) > 0 {
			t.errorAt("mqtt.users", "only the embedded broker has users; %s has its own", quote(redact(m.Broker)))
		}
		if m.AllowAnonymous != nil {
			t.errorAt("mqtt.allow_anonymous", "only for the embedded broker")
		}
		return
	}
	seen := map[string]int{}
	for i, u := range m.Users {
		p := index("mqtt.users", i)
		switch {
		case u.Username == "":
			t.errorAt(p+".username", "required")
		case seen[u.Username] > 0:
			t.errorAt(p+".username", "duplicate user %s (first at line %d)", quote(u.Username), seen[u.Username])
		default:
			seen[u.Username] = t.src.line(p + ".username")
		}
		if u.Password == "" {
			t.errorAt(p+".password", "required")
		}
	}
	if listenOK && !loopbackListen(m.Listen) && len(m.Users) == 0 && (m.AllowAnonymous == nil || !*m.AllowAnonymous) {
		t.errorAt("mqtt.listen", "%s is reachable from the network: name who may connect in mqtt.users, or set allow_anonymous: true to let anyone in", quote(m.Listen))
		return
	}
	if listenOK {
		t.checkOwnUser(m)
	}
}

// checkOwnUser checks that robotexec's own client can connect to its
// embedded broker: as one of the users, with that user's password, or
// anonymously when anonymous clients are allowed.
func (t *tree) checkOwnUser(m *MQTT) {
	switch {
	case len(m.Users) == 0 && !m.AnonymousAllowed():
		t.errorAt("mqtt.allow_anonymous", "false with no mqtt.users lets no client in, robotexec's own included: list the users")
		return
	case len(m.Users) == 0:
		return // an open broker lets any username in
	case m.Username == "" && !m.AnonymousAllowed():
		t.errorAt("mqtt.username", "required: the embedded broker refuses anonymous clients, so robotexec's own client must connect as one of mqtt.users")
		return
	case m.Username == "":
		return
	}
	for _, u := range m.Users {
		if u.Username == m.Username {
			if u.Password != m.Password {
				t.errorAt("mqtt.password", "not the password of user %s in mqtt.users", quote(u.Username))
			}
			return
		}
	}
	t.errorAt("mqtt.username", "%s is not among mqtt.users, so robotexec's own client could not connect", quote(m.Username))
}

// loopbackListen reports whether host:port listens on loopback only.
func loopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
