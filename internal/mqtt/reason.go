package mqtt

import (
	"fmt"
	"strconv"
	"strings"
)

// Reason is an MQTT 5 reason code with which the broker refused a
// connection, a subscription or a publication. It is an error, so that
// errors.Is(err, mqtt.NotAuthorized) tells a refusal for want of rights.
type Reason byte

// The reason codes of refusals (MQTT 5, section 2.4).
const (
	UnspecifiedError     Reason = 0x80
	MalformedPacket      Reason = 0x81
	ProtocolError        Reason = 0x82
	ImplementationError  Reason = 0x83
	UnsupportedProtocol  Reason = 0x84
	ClientIDNotValid     Reason = 0x85
	BadCredentials       Reason = 0x86
	NotAuthorized        Reason = 0x87
	ServerUnavailable    Reason = 0x88
	ServerBusy           Reason = 0x89
	Banned               Reason = 0x8A
	ServerShuttingDown   Reason = 0x8B
	BadAuthMethod        Reason = 0x8C
	KeepAliveTimeout     Reason = 0x8D
	SessionTakenOver     Reason = 0x8E
	TopicFilterInvalid   Reason = 0x8F
	TopicNameInvalid     Reason = 0x90
	PacketIDInUse        Reason = 0x91
	ReceiveMaxExceeded   Reason = 0x93
	TopicAliasInvalid    Reason = 0x94
	PacketTooLarge       Reason = 0x95
	MessageRateTooHigh   Reason = 0x96
	QuotaExceeded        Reason = 0x97
	AdministrativeAction Reason = 0x98
	PayloadFormatInvalid Reason = 0x99
	RetainNotSupported   Reason = 0x9A
	QoSNotSupported      Reason = 0x9B
	UseAnotherServer     Reason = 0x9C
	ServerMoved          Reason = 0x9D
	SharedSubsNotAllowed Reason = 0x9E
	ConnectionRateLimit  Reason = 0x9F
	MaximumConnectTime   Reason = 0xA0
	SubIDsNotSupported   Reason = 0xA1
	WildcardsNotAllowed  Reason = 0xA2
)

var reasonNames = map[Reason]string{
	UnspecifiedError: "unspecified error", MalformedPacket: "malformed packet", ProtocolError: "protocol error",
	ImplementationError: "implementation specific error", UnsupportedProtocol: "unsupported protocol version",
	ClientIDNotValid: "client identifier not valid", BadCredentials: "bad user name or password",
	NotAuthorized: "not authorized", ServerUnavailable: "server unavailable", ServerBusy: "server busy",
	Banned: "banned", ServerShuttingDown: "server shutting down", BadAuthMethod: "bad authentication method",
	KeepAliveTimeout: "keep alive timeout", SessionTakenOver: "session taken over",
	TopicFilterInvalid: "topic filter invalid", TopicNameInvalid: "topic name invalid",
	PacketIDInUse: "packet identifier in use", ReceiveMaxExceeded: "receive maximum exceeded",
	TopicAliasInvalid: "topic alias invalid", PacketTooLarge: "packet too large",
	MessageRateTooHigh: "message rate too high", QuotaExceeded: "quota exceeded",
	AdministrativeAction: "administrative action", PayloadFormatInvalid: "payload format invalid",
	RetainNotSupported: "retain not supported", QoSNotSupported: "QoS not supported",
	UseAnotherServer: "use another server", ServerMoved: "server moved",
	SharedSubsNotAllowed: "shared subscriptions not supported", ConnectionRateLimit: "connection rate exceeded",
	MaximumConnectTime: "maximum connect time", SubIDsNotSupported: "subscription identifiers not supported",
	WildcardsNotAllowed: "wildcard subscriptions not supported",
}

// String returns the reason's name, as MQTT 5 gives it.
func (r Reason) String() string {
	if n, ok := reasonNames[r]; ok {
		return n
	}
	return "reason 0x" + strconv.FormatUint(uint64(r), 16)
}

// Error returns the reason's name and code.
func (r Reason) Error() string { return fmt.Sprintf("%s (0x%02X)", r.String(), byte(r)) }

// Label returns the reason's name in the form of a metric label:
// not_authorized, quota_exceeded, packet_too_large.
func (r Reason) Label() string {
	b := []byte(r.String())
	for i, c := range b {
		if c == ' ' {
			b[i] = '_'
		}
	}
	return string(b)
}

// RefusedError is the broker's refusal of an operation of the client: a
// publication, a subscription or the connection. It is its Reason too:
// errors.Is(err, mqtt.QuotaExceeded).
type RefusedError struct {
	// Op is "publish", "subscribe", "unsubscribe" or "connect".
	Op string
	// Topic is the topic of a publication or the filter of a
	// subscription.
	Topic string
	// Reason is the broker's reason code.
	Reason Reason
	// Detail is the broker's reason string, if it gave one.
	Detail string
}

// Error says what the broker refused, and why.
func (e *RefusedError) Error() string {
	s := fmt.Sprintf("mqtt: %s %q: the broker refused: %v", e.Op, e.Topic, e.Reason)
	if e.Op == "connect" {
		s = fmt.Sprintf("mqtt: connect: the broker refused: %v", e.Reason)
	}
	if e.Detail != "" && !strings.EqualFold(e.Detail, e.Reason.String()) {
		s += ": " + e.Detail
	}
	return s
}

// Is reports whether target is e's Reason, or a sentinel error of the
// package that stands for it (ErrNotAuthorized, ErrSubscriptionRefused).
func (e *RefusedError) Is(target error) bool {
	switch target {
	case e.Reason:
		return true
	case ErrSubscriptionRefused:
		return e.Op == "subscribe"
	case ErrNotAuthorized:
		return e.Op == "connect" && (e.Reason == NotAuthorized || e.Reason == BadCredentials)
	}
	return false
}

// Unwrap returns the Reason.
func (e *RefusedError) Unwrap() error { return e.Reason }

// credentialsError says which credentials the broker refused, never the
// password.
func credentialsError(e *RefusedError, ep *endpoint) error {
	if ep.username == "" {
		return fmt.Errorf("%w: anonymous connections are not allowed (%w)", ErrNotAuthorized, e.Reason)
	}
	return fmt.Errorf("%w of user %q (%w)", ErrNotAuthorized, ep.username, e.Reason)
}
