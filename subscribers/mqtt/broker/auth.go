package broker

import (
	"crypto/subtle"
	"strings"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/robotexec/robotexec/subscribers"
)

// User is a user of the broker: a password and the topics the user may
// read and write.
type User struct {
	// Password is the user's password. Required: a user connects with
	// this password only.
	Password string
	// Read are the topic filters the user may read: a subscription is
	// granted when its filter (of a shared subscription, the filter after
	// $share/GROUP/) can match a topic of Read, and delivers only the
	// messages whose topic matches Read. (optional) Defaults to none.
	Read []string
	// Write are the topic filters the user may publish to; a publication
	// to any other topic is refused: dropped at QoS 0, refused with "not
	// authorised" to an MQTT 5 client and by disconnecting an MQTT 3.1.1
	// client at QoS 1 and 2, as MQTT specifies. (optional) Defaults to
	// none.
	Write []string
}

// Anonymous says whether the broker lets in clients that connect without
// a username; see [Config.Anonymous].
type Anonymous int

const (
	// AnonymousDefault lets anonymous clients in when Config.Users is
	// empty, and refuses them otherwise.
	AnonymousDefault Anonymous = iota
	// AnonymousAllowed always lets anonymous clients in.
	AnonymousAllowed
	// AnonymousRefused never lets anonymous clients in.
	AnonymousRefused
)

// authHook decides who may connect and what each may read and write. An
// open broker, with no users and anonymous clients allowed, checks
// nothing. Otherwise a listed user gets its own access and an anonymous
// client, when allowed, every topic.
type authHook struct {
	mochi.HookBase
	users     map[string]User
	anonymous bool
	open      bool
}

func newAuthHook(users map[string]User, a Anonymous) *authHook {
	anonymous := a == AnonymousAllowed || (a == AnonymousDefault && len(users) == 0)
	return &authHook{users: users, anonymous: anonymous, open: anonymous && len(users) == 0}
}

func (h *authHook) ID() string { return "robotexec-auth" }

func (h *authHook) Provides(b byte) bool {
	return b == mochi.OnConnectAuthenticate || b == mochi.OnACLCheck
}

func (h *authHook) OnConnectAuthenticate(cl *mochi.Client, pk packets.Packet) bool {
	if h.open {
		return true
	}
	if len(pk.Connect.Username) == 0 {
		return h.anonymous
	}
	u, ok := h.users[string(pk.Connect.Username)]
	if !ok || !pk.Connect.PasswordFlag {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(u.Password), pk.Connect.Password) == 1
}

// OnACLCheck is asked for a subscription's filter when a client
// subscribes, for a message's topic before each delivery (write false),
// and for a publication's topic (write true).
func (h *authHook) OnACLCheck(cl *mochi.Client, topic string, write bool) bool {
	if h.open {
		return true
	}
	if len(cl.Properties.Username) == 0 {
		return h.anonymous
	}
	u, ok := h.users[string(cl.Properties.Username)]
	if !ok {
		return false
	}
	if write {
		for _, f := range u.Write {
			if subscribers.Match(f, topic) {
				return true
			}
		}
		return false
	}
	topic = withoutShare(topic)
	for _, f := range u.Read {
		if subscribers.Overlap(f, topic) {
			return true
		}
	}
	return false
}

// withoutShare returns the filter of a shared subscription's
// $share/GROUP/FILTER, and any other filter or topic as it is.
func withoutShare(filter string) string {
	rest, ok := strings.CutPrefix(filter, "$share/")
	if !ok {
		return filter
	}
	_, inner, _ := strings.Cut(rest, "/")
	return inner
}
