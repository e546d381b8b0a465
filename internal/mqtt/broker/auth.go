package broker

import (
	"crypto/subtle"
	"log/slog"
	"strings"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/robotexec/robotexec/internal/bus"
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
	// Write are the topic filters the user may publish to. A publication
	// to any other topic is dropped: not delivered to anyone, not
	// retained, and counted (Stats.Unauthorized); the client stays
	// connected. At QoS 1 and 2 the broker answers an MQTT 5 client with
	// reason code 0x87, "not authorized" (a PUBACK, or a PUBREC that ends
	// the exchange), and acknowledges the publication to an MQTT 3.1.1
	// client, which has no code to say so, as if it had been delivered
	// (a PUBACK, or PUBREC and, on its PUBREL, PUBCOMP), as mosquitto
	// does. (optional) Defaults to none.
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
	counts    *counters
	log       *slog.Logger
}

func newAuthHook(users map[string]User, a Anonymous, counts *counters, log *slog.Logger) *authHook {
	anonymous := a == AnonymousAllowed || (a == AnonymousDefault && len(users) == 0)
	return &authHook{users: users, anonymous: anonymous, open: anonymous && len(users) == 0, counts: counts, log: log}
}

func (h *authHook) ID() string { return "robotexec-auth" }

func (h *authHook) Provides(b byte) bool {
	return b == mochi.OnConnectAuthenticate || b == mochi.OnACLCheck || b == mochi.OnPublish
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
// and for a publication's topic (write true). A publication is let
// through here and checked by OnPublish: mochi (v2.7.9) asks before it
// resolves an MQTT 5 topic alias, and disconnects an MQTT 3.1.1 client
// whose QoS 1 or 2 publication it refuses.
func (h *authHook) OnACLCheck(cl *mochi.Client, topic string, write bool) bool {
	if write {
		return true
	}
	return h.may(cl, topic, false)
}

// OnPublish runs once mochi resolved the topic of a client's publication,
// before it acknowledges, retains and routes the publication; see
// User.Write for what becomes of one that the client may not make.
func (h *authHook) OnPublish(cl *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	if cl.Net.Inline || h.may(cl, pk.TopicName, true) {
		return pk, nil
	}
	h.counts.unauthorized.Add(1)
	h.log.Debug("publication not authorized", "client", cl.ID, "user", string(cl.Properties.Username), "topic", pk.TopicName)
	if pk.FixedHeader.Qos == 0 || cl.Properties.ProtocolVersion < 5 {
		// Acknowledged as usual, neither retained nor routed.
		return pk, packets.CodeSuccessIgnore
	}
	ack := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Puback}, PacketID: pk.PacketID,
		ReasonCode: packets.ErrNotAuthorized.Code, Properties: packets.Properties{ReasonString: packets.ErrNotAuthorized.Reason}}
	if pk.FixedHeader.Qos == 2 {
		ack.FixedHeader.Type = packets.Pubrec
	}
	if err := cl.WritePacket(ack); err != nil {
		return pk, err
	}
	return pk, packets.ErrRejectPacket // mochi answers nothing more
}

// may reports whether cl may read (write false) or write a topic; to
// read, a filter.
func (h *authHook) may(cl *mochi.Client, topic string, write bool) bool {
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
		if bus.Overlap(f, topic) {
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
