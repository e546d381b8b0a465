package mqtt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/eclipse/paho.golang/paho/session"

	"github.com/robotexec/robotexec/internal/bus"
)

// link5 is an MQTT 5 connection: a paho.golang client, which lives as
// long as one network connection, on the client's session (session5).
type link5 struct {
	c       *Client
	pc      *paho.Client
	conn    *frameConn
	subIDs  bool   // the broker takes subscription identifiers
	recvMax int    // the broker's Receive Maximum
	held    bool   // the feeder holds the writer (hold, release)
	acks    []byte // PUBACKs waiting for flushAcks
	ackConn uint64 // their connection's number
	num     uint64 // the connection's number in the session (session5.conn)
	ctx     context.Context
	cancel  context.CancelFunc
	endOnce sync.Once
	ended   chan struct{}
	why     error
}

// errRequeue says that a publication was not taken because its
// connection ended; it goes on the next one.
var errRequeue = errors.New("mqtt: connection ended before the publication was taken")

// connect5 makes an MQTT 5 connection to ep on conn.
func (c *Client) connect5(ctx context.Context, conn *frameConn, ep *endpoint) (connected, error) {
	l := &link5{c: c, conn: conn, ended: make(chan struct{})}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.pc = paho.NewClient(paho.ClientConfig{
		ClientID:           c.cfg.ClientID,
		Conn:               conn,
		Session:            c.sess5,
		OnPublishReceived:  []func(paho.PublishReceived) (bool, error){l.onPublish},
		OnClientError:      func(err error) { l.end(err) },
		OnServerDisconnect: l.onServerDisconnect,
		// paho bounds each wait by this as well as by its context: a
		// publication waiting for a place among the broker's Receive
		// Maximum would fail after it, and the broker's flow control
		// may take longer. The client's contexts bound every wait.
		PacketTimeout: 24 * time.Hour,
	})
	ca, err := l.pc.Connect(ctx, c.connectPacket(ep))
	if err != nil {
		l.cancel()
		_ = conn.Close()
		return connected{}, c.connectError(ca, err, ep)
	}
	go func() {
		// Ended once paho's goroutines have: no handler of this
		// connection runs after the next connection began.
		<-l.pc.Done()
		l.end(errors.New("mqtt: connection closed"))
		close(l.ended)
	}()
	l.num = c.sess5.current()
	res := connected{l: l, sessionPresent: ca.SessionPresent, resent: c.sess5.requeued()}
	l.subIDs, l.recvMax = true, 65535
	if p := ca.Properties; p != nil {
		l.subIDs = p.SubIDAvailable
		if p.ReceiveMaximum != nil {
			l.recvMax = int(*p.ReceiveMaximum)
		}
		if p.MaximumPacketSize != nil {
			res.maxPacket = int(*p.MaximumPacketSize)
		}
	}
	return res, nil
}

// connectPacket is the client's CONNECT to ep: its session, its limits
// and its will.
func (c *Client) connectPacket(ep *endpoint) *paho.Connect {
	s := c.cfg
	expiry := uint32(0)
	if !s.CleanSession {
		expiry = uint32(s.SessionExpiry / time.Second)
	}
	recvMax := uint16(s.ReceiveMaximum)
	maxPacket := uint32(s.packetLimit() + 5)
	cp := &paho.Connect{
		ClientID:     s.ClientID,
		KeepAlive:    uint16(s.KeepAlive / time.Second),
		CleanStart:   s.CleanSession,
		Username:     ep.username,
		UsernameFlag: ep.username != "",
		Password:     []byte(ep.password),
		PasswordFlag: ep.password != "",
		Properties: &paho.ConnectProperties{
			SessionExpiryInterval: &expiry,
			ReceiveMaximum:        &recvMax,
			MaximumPacketSize:     &maxPacket,
			RequestProblemInfo:    true,
		},
	}
	if s.StatusTopic != "" {
		cp.WillMessage = &paho.WillMessage{Retain: true, QoS: 1, Topic: s.StatusTopic, Payload: []byte(StatusOffline)}
	}
	return cp
}

// connectError describes a CONNECT that ep refused.
func (c *Client) connectError(ca *paho.Connack, err error, ep *endpoint) error {
	if ca == nil || ca.ReasonCode < 0x80 {
		return err
	}
	e := &RefusedError{Op: "connect", Reason: Reason(ca.ReasonCode)}
	if ca.Properties != nil {
		e.Detail = ca.Properties.ReasonString
	}
	switch e.Reason {
	case NotAuthorized, BadCredentials:
		return credentialsError(e, ep)
	case UnsupportedProtocol:
		return fmt.Errorf("%w: the broker does not speak MQTT 5; set mqtt.protocol: 3.1.1", e)
	case ClientIDNotValid:
		return fmt.Errorf("%w: client ID %q", e, c.cfg.ClientID)
	}
	return e
}

// onPublish is paho's handler of received messages: it hands them to the
// intake, which never blocks.
func (l *link5) onPublish(p paho.PublishReceived) (bool, error) {
	pb := p.Packet
	it := inbound{msg: bus.Message{Topic: pb.Topic, Payload: fitted(pb.Payload), QoS: pb.QoS, Retained: pb.Retain},
		dup: pb.Duplicate(), link: l, fc: l.conn, pid: pb.PacketID}
	if pb.QoS > 0 {
		it.conn = l.c.sess5.current()
	}
	if props := pb.Properties; props != nil {
		if props.SubscriptionIdentifier != nil {
			it.id = uint32(*props.SubscriptionIdentifier)
		}
		for _, u := range props.User {
			if u.Key == subIDsKey {
				it.ids = parseSubIDs(u.Value, nil)
			}
		}
	}
	l.c.onMessage(&it)
	return true, nil
}

// fitted returns the payload p in a slice of its own size when p holds
// much more memory than it uses: paho reads every payload into a buffer of
// at least 512 bytes, which a small message waiting in the intake would
// otherwise keep (a burst of 10,000 small messages: 5 MB).
func fitted(p []byte) []byte {
	if cap(p)-len(p) < 256 {
		return p
	}
	return append(make([]byte, 0, len(p)), p...)
}

func (l *link5) onServerDisconnect(d *paho.Disconnect) {
	err := error(&RefusedError{Op: "connection", Reason: Reason(d.ReasonCode)})
	if d.ReasonCode < 0x80 {
		err = fmt.Errorf("mqtt: the broker disconnected (reason 0x%02X)", d.ReasonCode)
	}
	if d.Properties != nil && d.Properties.ReasonString != "" {
		err = fmt.Errorf("%w: %s", err, d.Properties.ReasonString)
	}
	l.end(err)
}

// end records why the connection ended, once, and closes it; paho's
// goroutines then end.
func (l *link5) end(err error) {
	l.endOnce.Do(func() {
		l.why = err
		l.cancel()
		_ = l.conn.Close()
	})
}

func (l *link5) done() <-chan struct{} { return l.ended }
func (l *link5) err() error            { return l.why }

func (l *link5) publish(g *outgoing) error {
	if l.ctx.Err() != nil {
		// An ended connection: the session's publications of the next
		// were sent again at its CONNACK, a publication stored now
		// would wait for the one after.
		return errRequeue
	}
	p := &paho.Publish{Topic: g.m.Topic, QoS: g.m.QoS, Retain: g.m.Retained, Payload: g.m.Payload}
	if len(g.user) > 0 {
		p.Properties = &paho.PublishProperties{}
		for _, kv := range g.user {
			p.Properties.User = append(p.Properties.User, paho.UserProperty{Key: kv[0], Value: kv[1]})
		}
	}
	if g.m.QoS == 0 {
		if _, err := l.pc.PublishWithOptions(l.ctx, p, paho.PublishOptions{}); err != nil {
			return l.publishError(g, err)
		}
		return nil
	}
	if l.held && l.c.sess5.inFlight() >= l.recvMax {
		// paho waits for an answer to free a place: nothing may be held
		// meanwhile (a write under way takes what waits only when the
		// writer is not corked).
		l.conn.uncork()
		defer l.conn.cork()
	}
	l.c.sess5.hand(g, l.num)
	_, err := l.pc.PublishWithOptions(l.ctx, p, paho.PublishOptions{Method: paho.PublishMethod_AsyncSend})
	l.c.sess5.hand(nil, 0)
	if err == nil || errors.Is(err, paho.ErrNetworkErrorAfterStored) {
		return nil // in the session: the answer comes, maybe on the next connection
	}
	return l.publishError(g, err)
}

// publishError describes a publication that paho did not take.
func (l *link5) publishError(g *outgoing, err error) error {
	switch {
	case errors.Is(err, session.ErrNoConnection), errors.Is(err, context.Canceled), errors.Is(err, errStale), l.ctx.Err() != nil:
		return errRequeue
	case errors.Is(err, paho.ErrInvalidArguments):
		// The broker's CONNACK said it takes no such QoS or no retained
		// messages.
		r := QoSNotSupported
		if g.m.Retained {
			r = RetainNotSupported
		}
		return &RefusedError{Op: "publish", Topic: g.m.Topic, Reason: r, Detail: err.Error()}
	}
	return err
}

func (l *link5) subscribe(ctx context.Context, w bus.WireFilter, retained bool) error {
	o := paho.SubscribeOptions{Topic: w.Filter, QoS: w.QoS, NoLocal: w.NoLocal}
	if !retained {
		o.RetainHandling = 2 // send none
	}
	s := &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{o}}
	if w.ID != 0 && l.subIDs {
		id := int(w.ID)
		s.Properties = &paho.SubscribeProperties{SubscriptionIdentifier: &id}
	}
	ctx, cancel := l.bound(ctx)
	defer cancel()
	sa, err := l.pc.Subscribe(ctx, s)
	if sa != nil && len(sa.Reasons) > 0 && sa.Reasons[0] >= 0x80 {
		e := &RefusedError{Op: "subscribe", Topic: w.Filter, Reason: Reason(sa.Reasons[0])}
		if sa.Properties != nil {
			e.Detail = sa.Properties.ReasonString
		}
		return e
	}
	return err
}

func (l *link5) unsubscribe(ctx context.Context, filters ...string) error {
	ctx, cancel := l.bound(ctx)
	defer cancel()
	ua, err := l.pc.Unsubscribe(ctx, &paho.Unsubscribe{Topics: filters})
	if ua != nil {
		for i, r := range ua.Reasons {
			// 0x11: there was no such subscription, which is fine.
			if r >= 0x80 && i < len(filters) {
				return &RefusedError{Op: "unsubscribe", Topic: filters[i], Reason: Reason(r)}
			}
		}
	}
	return err
}

// bound returns ctx, ended also when the connection ends: paho waits for
// an answer on a connection that has ended until its context does.
func (l *link5) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(l.ctx, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// maxAcks bounds the PUBACKs that wait for flushAcks.
const maxAcks = 64

func (l *link5) ack(it *inbound) {
	if it.msg.QoS != 1 {
		// QoS 2: paho's session records the PUBREC.
		l.flushAcks()
		l.c.sess5.ackNow(it.pid, it.msg.QoS, it.conn)
		return
	}
	if it.conn != l.ackConn {
		l.flushAcks()
		l.ackConn = it.conn
	}
	// A PUBACK is all that paho's session does for a QoS 1 message.
	l.acks = append(l.acks, typePuback<<4, 2, byte(it.pid>>8), byte(it.pid))
	if len(l.acks) >= 4*maxAcks {
		l.flushAcks()
	}
}

func (l *link5) flushAcks() {
	if len(l.acks) == 0 {
		return
	}
	l.c.sess5.send(l.conn, l.acks, l.ackConn)
	l.acks = l.acks[:0]
}

func (l *link5) hold() {
	l.held = true
	l.conn.cork()
}

func (l *link5) release() {
	l.held = false
	l.conn.uncork()
}

func (l *link5) flushed(ctx context.Context) bool { return l.c.sess5.waitEmpty(ctx) }

func (l *link5) close() {
	_ = l.pc.Disconnect(&paho.Disconnect{ReasonCode: 0})
	l.end(errors.New("mqtt: disconnected"))
	<-l.ended
}

func (l *link5) frames() *frameConn { return l.conn }
