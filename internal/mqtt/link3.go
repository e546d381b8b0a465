package mqtt

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"

	paho3 "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/robotexec/robotexec/internal/bus"
)

// link3 is an MQTT 3.1.1 connection (Config.Protocol 3.1.1): a
// paho.mqtt.golang client that lives as long as one network connection,
// on the client's store of in-flight publications (store3).
type link3 struct {
	c       *Client
	pc      paho3.Client
	conn    *frameConn
	endOnce sync.Once
	ended   chan struct{}
	why     error
	// last is the token of the last QoS 1 or 2 publication: the broker
	// acknowledges in order, so when it completes the broker has every
	// earlier one.
	last atomic.Pointer[paho3.Token]
	// pending are the QoS 1 and 2 publications not known to be
	// acknowledged, in order, with a clean session: paho forgets them
	// with the connection (it resets its store on connecting), and the
	// client sends them again (see unacknowledged).
	mu      sync.Mutex
	pending []pending3
	// sends and sent are the feeder's way to the sender (see send).
	sends chan publication3
	sent  chan paho3.Token // buffered
}

// publication3 is what the sender gives paho's Publish: a copy, as the
// feeder may go on without waiting for it.
type publication3 struct {
	topic    string
	qos      byte
	retained bool
	payload  []byte
}

// pending3 is a publication and its token.
type pending3 struct {
	g   outgoing
	tok paho3.Token
}

// connect3 makes an MQTT 3.1.1 connection to ep on conn.
func (c *Client) connect3(ctx context.Context, conn *frameConn, ep *endpoint) (connected, error) {
	l := &link3{c: c, conn: conn, ended: make(chan struct{})}
	l.pc = paho3.NewClient(l.options(ep))
	tok := l.pc.Connect()
	select {
	case <-tok.Done():
	case <-ctx.Done():
		_ = conn.Close()
		return connected{}, ctx.Err()
	}
	if err := tok.Error(); err != nil {
		_ = conn.Close()
		return connected{}, c.describe3(err, ep)
	}
	l.sends, l.sent = make(chan publication3), make(chan paho3.Token, 1)
	go l.sender()
	res := connected{l: l}
	if ct, ok := tok.(*paho3.ConnectToken); ok {
		res.sessionPresent = ct.SessionPresent()
	}
	return res, nil
}

// options are paho's options for one connection: no reconnection (the
// client makes the next connection), the client's store, acknowledgements
// left to the intake.
func (l *link3) options(ep *endpoint) *paho3.ClientOptions {
	s := l.c.cfg
	o := paho3.NewClientOptions()
	o.AddBroker(ep.url.String())
	o.SetClientID(s.ClientID)
	o.SetUsername(ep.username)
	o.SetPassword(ep.password)
	// Without an explicit version paho retries a refused CONNECT with MQTT
	// 3.1, which hides why the broker refused.
	o.SetProtocolVersion(4)
	o.SetCleanSession(s.CleanSession)
	o.SetOrderMatters(true)
	o.SetAutoAckDisabled(true)
	o.SetStore(l.c.store3)
	o.SetAutoReconnect(false)
	o.SetConnectRetry(false)
	o.SetResumeSubs(false)
	o.SetKeepAlive(s.KeepAlive)
	o.SetPingTimeout(s.PingTimeout)
	o.SetConnectTimeout(s.ConnectTimeout)
	// The connection is open already: paho opens one per client.
	o.SetCustomOpenConnectionFn(func(*url.URL, paho3.ClientOptions) (net.Conn, error) { return l.conn, nil })
	if s.StatusTopic != "" {
		o.SetWill(s.StatusTopic, StatusOffline, 1, true)
	}
	o.SetDefaultPublishHandler(l.onMessage)
	o.SetConnectionLostHandler(func(_ paho3.Client, err error) { l.end(err) })
	return o
}

// describe3 turns a refused MQTT 3.1.1 CONNECT into an error that says
// what to check.
func (c *Client) describe3(err error, ep *endpoint) error {
	switch {
	case errors.Is(err, packets.ErrorRefusedNotAuthorised):
		return credentialsError(&RefusedError{Op: "connect", Reason: NotAuthorized, Detail: err.Error()}, ep)
	case errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword):
		return credentialsError(&RefusedError{Op: "connect", Reason: BadCredentials, Detail: err.Error()}, ep)
	case errors.Is(err, packets.ErrorRefusedIDRejected):
		return fmt.Errorf("mqtt: broker rejected client ID %q: %w", c.cfg.ClientID, err)
	}
	return err
}

// onMessage is paho's handler of received messages.
func (l *link3) onMessage(_ paho3.Client, pm paho3.Message) {
	it := inbound{msg: bus.Message{Topic: pm.Topic(), Payload: pm.Payload(), QoS: pm.Qos(), Retained: pm.Retained()},
		dup: pm.Duplicate(), link: l, fc: l.conn, m3: pm}
	l.c.onMessage(&it)
}

func (l *link3) end(err error) {
	l.endOnce.Do(func() {
		l.why = err
		_ = l.conn.Close()
		close(l.ended)
	})
}

func (l *link3) done() <-chan struct{} { return l.ended }
func (l *link3) err() error            { return l.why }

func (l *link3) publish(g *outgoing) error {
	if !l.pc.IsConnectionOpen() || l.hasEnded() {
		return errRequeue
	}
	tok, handed := l.send(g)
	if tok == nil {
		if !handed || (g.m.QoS > 0 && l.c.cfg.CleanSession) {
			return errRequeue // not in paho's store, or in one the next connection resets
		}
		// In paho's store, which the next connection of the persistent
		// session sends again (QoS 0: at most once).
		if g.result != nil {
			tell(g.result, ErrUnconfirmed)
		}
		return nil
	}
	if g.m.QoS > 0 {
		l.last.Store(&tok)
		if l.c.cfg.CleanSession {
			l.track(*g, tok)
		}
	}
	if g.result != nil {
		result := g.result
		go func() {
			select {
			case <-tok.Done():
				tell(result, tok.Error())
			case <-l.ended:
				// paho completes the token without error when it sends
				// the publication again on a later connection.
				tell(result, ErrUnconfirmed)
			}
		}()
	}
	return nil
}

// send has the sender publish g and returns paho's token, or nil when
// the connection ended first, and whether the sender took g. paho's
// Publish, finding the connection up just before it goes down, would wait
// its write timeout, 30 s, for goroutines already gone: the feeder, and
// every publication behind, would wait with it.
func (l *link3) send(g *outgoing) (tok paho3.Token, handed bool) {
	p := publication3{topic: g.m.Topic, qos: g.m.QoS, retained: g.m.Retained, payload: g.m.Payload}
	select {
	case l.sends <- p:
	case <-l.ended:
		return nil, false
	}
	select {
	case tok = <-l.sent:
		return tok, true
	case <-l.ended:
		return nil, true // l is not used again: a late token stays in sent
	}
}

// sender calls paho's Publish for send until the connection ends.
func (l *link3) sender() {
	for {
		select {
		case p := <-l.sends:
			l.sent <- l.pc.Publish(p.topic, p.qos, p.retained, p.payload)
		case <-l.ended:
			return
		}
	}
}

// hasEnded reports whether the connection ended.
func (l *link3) hasEnded() bool {
	select {
	case <-l.ended:
		return true
	default:
		return false
	}
}

// track records a QoS 1 or 2 publication of a clean session, and forgets
// the acknowledged ones at the front.
func (l *link3) track(g outgoing, tok paho3.Token) {
	g.result = nil // told ErrUnconfirmed if the connection ends first
	l.mu.Lock()
	defer l.mu.Unlock()
	i := 0
	for i < len(l.pending) && acked(l.pending[i].tok) {
		i++
	}
	l.pending = append(l.pending[i:], pending3{g: g, tok: tok})
}

// acked reports whether tok completed without error.
func acked(tok paho3.Token) bool {
	select {
	case <-tok.Done():
		return tok.Error() == nil
	default:
		return false
	}
}

// unacknowledged returns, once the connection ended, the publications of a
// clean session that the broker did not acknowledge, in order.
func (l *link3) unacknowledged() []outgoing {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []outgoing
	for _, p := range l.pending {
		if !acked(p.tok) {
			out = append(out, p.g)
		}
	}
	l.pending = nil
	return out
}

func (l *link3) subscribe(ctx context.Context, w bus.WireFilter, _ bool) error {
	tok := l.pc.Subscribe(w.Filter, w.QoS, nil)
	if err := l.wait(ctx, tok); err != nil {
		return err
	}
	st, ok := tok.(*paho3.SubscribeToken)
	if !ok {
		return nil
	}
	// paho keys a shared subscription's result by its inner filter.
	key, _ := bus.RouteFilter(w.Filter)
	if code := st.Result()[key]; code >= 0x80 {
		return &RefusedError{Op: "subscribe", Topic: w.Filter, Reason: UnspecifiedError}
	}
	return nil
}

func (l *link3) unsubscribe(ctx context.Context, filters ...string) error {
	return l.wait(ctx, l.pc.Unsubscribe(filters...))
}

// wait waits for tok, ctx or the connection's end.
func (l *link3) wait(ctx context.Context, tok paho3.Token) error {
	select {
	case <-tok.Done():
		return tok.Error()
	case <-ctx.Done():
		return ctx.Err()
	case <-l.ended:
		return errRequeue
	}
}

func (l *link3) ack(it *inbound) {
	select {
	case <-l.ended:
	default:
		it.m3.Ack()
	}
}

// flushAcks, hold and release do nothing: paho.mqtt.golang writes from
// a goroutine of its own.
func (l *link3) flushAcks() {}
func (l *link3) hold()      {}
func (l *link3) release()   {}

func (l *link3) flushed(ctx context.Context) bool {
	p := l.last.Load()
	if p == nil {
		return true
	}
	select {
	case <-(*p).Done():
		return (*p).Error() == nil
	case <-ctx.Done():
	case <-l.ended:
	}
	return false
}

func (l *link3) close() {
	l.pc.Disconnect(disconnectQuiesce)
	l.end(errors.New("mqtt: disconnected"))
}

func (l *link3) frames() *frameConn { return l.conn }
