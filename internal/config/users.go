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
	t.checkUserList("mqtt.users", m.Users)
	if listenOK && t.openToNetwork("mqtt", m.Listen, m.Users, m.AllowAnonymous) {
		return
	}
	if listenOK {
		t.checkOwnUser(m)
	}
}

// checkView checks the view: section: a host:port to listen on, its
// users by the embedded broker's rule, and the origins it accepts.
func (t *tree) checkView(v *View) {
	if v.Listen == "" {
		if len(v.Users) > 0 {
			t.errorAt("view.users", "only with view.listen")
		}
		if v.AllowAnonymous != nil {
			t.errorAt("view.allow_anonymous", "only with view.listen")
		}
		if v.MaxTopics != 0 {
			t.errorAt("view.max_topics", "only with view.listen")
		}
		if len(v.AllowedOrigins) > 0 {
			t.errorAt("view.allowed_origins", "only with view.listen")
		}
		if v.AnonymousPublish {
			t.errorAt("view.anonymous_publish", "only with view.listen")
		}
		return
	}
	if v.MaxTopics < 0 {
		t.errorAt("view.max_topics", "%d is negative", v.MaxTopics)
	}
	t.checkOrigins(v)
	t.checkUserList("view.users", v.Users)
	if msg := checkHostPort(v.Listen, "127.0.0.1:8765"); msg != "" {
		t.errorAt("view.listen", "%s", msg)
		return
	}
	if t.openToNetwork("view", v.Listen, v.Users, v.AllowAnonymous) {
		return
	}
	if len(v.Users) == 0 && !v.AnonymousAllowed() {
		t.errorAt("view.allow_anonymous", "false with no view.users lets no viewer in: list the users")
	}
	if v.AnonymousPublish && !v.AnonymousAllowed() {
		t.errorAt("view.anonymous_publish", "true, but anonymous viewers are not let in: set allow_anonymous: true, or give view.users write filters")
	}
}

// checkUserList checks that each of users, at path, has a unique username
// and a password.
func (t *tree) checkUserList(path string, users []User) {
	seen := map[string]int{}
	for i, u := range users {
		p := index(path, i)
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
}

// openToNetwork reports, as an error at SECTION.listen, a listen address
// reachable from the network with no users and anonymous access not
// allowed explicitly.
func (t *tree) openToNetwork(section, listen string, users []User, anonymous *bool) bool {
	if loopbackListen(listen) || len(users) > 0 || (anonymous != nil && *anonymous) {
		return false
	}
	t.errorAt(section+".listen", "%s is reachable from the network: name who may connect in %s.users, or set allow_anonymous: true to let anyone in", quote(listen), section)
	return true
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
