package mqtt

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho/log"
	"github.com/eclipse/paho.golang/paho/session"
	"github.com/eclipse/paho.golang/paho/session/state"
)

// session5 is the client's MQTT 5 session state across its connections:
// paho.golang's in-memory state (in-flight publications both ways, packet
// identifiers), which this wraps to learn three things paho does not
// tell an asynchronous publisher or a handler:
//
//   - the broker's answer to each QoS 1 and 2 publication (PUBACK, PUBREC
//     or PUBCOMP, with its reason code), for the client's settled;
//   - the publications still unanswered when the broker says it has no
//     session (Session Present 0): they are lost at the broker, and the
//     client sends them again, in order, on the new connection;
//   - when to acknowledge a received message: paho acknowledges when the
//     handler returns, and the client only once the message was handed
//     to a subscription (see intake.go), so Ack is left to ackNow.
type session5 struct {
	*state.State
	c *Client

	mu      sync.Mutex
	pubs    map[uint16]outgoing // unanswered QoS 1 and 2 publications
	recd    map[uint16]struct{} // of them, QoS 2 ones the broker received (PUBREC)
	handing *outgoing           // the publication being handed to paho
	// handingConn is the number of the connection that hands it.
	handingConn uint64
	lost        int           // publications requeued at the last CONNACK
	empty       chan struct{} // closed when pubs is empty, while waited for

	// addMu keeps a connection's CONNACK out while a publication is
	// being added: paho's State.AddToSession reads the send quota
	// without its lock, and ConAckReceived replaces it (v0.23.0; the
	// race detector saw it across a reconnection). Adding ends soon
	// once the old connection is lost, which comes first.
	addMu sync.RWMutex

	// connMu orders acknowledgements with connections: conn is the
	// connection's number, 0 between connections.
	connMu sync.RWMutex
	conn   uint64
	conns  uint64
}

var _ session.SessionManager = (*session5)(nil)

func newSession5(c *Client) *session5 {
	return &session5{State: state.NewInMemory(), c: c, pubs: make(map[uint16]outgoing), recd: make(map[uint16]struct{})}
}

// ConAckReceived starts a connection's session: with Session Present 0
// the unanswered publications go back to the client's queue, but the
// QoS 2 ones that the broker received (PUBREC): it has them, and sending
// them again would deliver them twice; they succeeded.
//
// It runs with no publication being added (addMu), so that a publication
// is either in the session before it, and sent again or given back here,
// or refused to the ended connection that hands it after it (see
// AddToSession), and given back by that connection.
func (s *session5) ConAckReceived(w io.Writer, cp *packets.Connect, ca *packets.Connack) error {
	s.addMu.Lock()
	s.connMu.Lock()
	s.conns++
	s.conn = s.conns
	s.connMu.Unlock()
	s.mu.Lock()
	s.lost = 0
	s.mu.Unlock()
	var took []outgoing
	if !ca.SessionPresent {
		s.mu.Lock()
		var lost []outgoing
		for id, g := range s.pubs {
			if _, ok := s.recd[id]; ok {
				took = append(took, g)
			} else {
				lost = append(lost, g)
			}
		}
		clear(s.pubs)
		clear(s.recd)
		s.lost = len(lost)
		s.signalEmpty()
		s.mu.Unlock()
		s.c.requeue(lost)
	}
	err := s.State.ConAckReceived(w, cp, ca)
	s.addMu.Unlock()
	for i := range took {
		s.c.settled(&took[i], nil)
	}
	return err
}

// requeued returns how many unanswered publications the last CONNACK sent
// back to the client's queue, to go again.
func (s *session5) requeued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}

// ConnectionLost ends the connection's acknowledgements.
func (s *session5) ConnectionLost(dp *packets.Disconnect) error {
	s.connMu.Lock()
	s.conn = 0
	s.connMu.Unlock()
	return s.State.ConnectionLost(dp)
}

// current returns the connection's number.
func (s *session5) current() uint64 {
	s.connMu.RLock()
	defer s.connMu.RUnlock()
	return s.conn
}

// errStale refuses a publication to the connection that hands it, which
// ended: the session belongs to the next connection now, which would never
// send it. The connection gives it back to the client's queue.
var errStale = errors.New("mqtt: the connection ended before the publication was stored")

// AddToSession records which publication a PUBLISH's identifier stands
// for; it refuses, with errStale, a publication that a connection other
// than the session's current one hands.
func (s *session5) AddToSession(ctx context.Context, p session.Packet, resp chan<- packets.ControlPacket) error {
	s.addMu.RLock()
	defer s.addMu.RUnlock()
	_, isPub := p.(*packets.Publish)
	s.mu.Lock()
	handing, conn := s.handing, s.handingConn
	s.mu.Unlock()
	if isPub && handing != nil && conn != s.current() {
		return errStale
	}
	if err := s.State.AddToSession(ctx, p, resp); err != nil {
		return err
	}
	if pb, ok := p.(*packets.Publish); ok && handing != nil {
		s.mu.Lock()
		s.pubs[pb.PacketID] = *handing
		s.mu.Unlock()
	}
	return nil
}

// hand records g as the publication that the connection conn is handing
// paho, or none.
func (s *session5) hand(g *outgoing, conn uint64) {
	s.mu.Lock()
	s.handing, s.handingConn = g, conn
	s.mu.Unlock()
}

// PacketReceived settles the publications the broker answered.
func (s *session5) PacketReceived(recv *packets.ControlPacket, ch chan<- *packets.Publish) error {
	switch p := recv.Content.(type) {
	case *packets.Puback:
		s.settle(p.PacketID, p.ReasonCode, p.Properties)
	case *packets.Pubrec:
		if p.ReasonCode >= 0x80 {
			s.settle(p.PacketID, p.ReasonCode, p.Properties)
		} else {
			s.received(p.PacketID)
		}
	case *packets.Pubcomp:
		s.settle(p.PacketID, p.ReasonCode, p.Properties)
	}
	return s.State.PacketReceived(recv, ch)
}

// received records that the broker received the QoS 2 publication id.
func (s *session5) received(id uint16) {
	s.mu.Lock()
	if _, ok := s.pubs[id]; ok {
		s.recd[id] = struct{}{}
	}
	s.mu.Unlock()
}

func (s *session5) settle(id uint16, code byte, props *packets.Properties) {
	s.mu.Lock()
	g, ok := s.pubs[id]
	delete(s.pubs, id)
	delete(s.recd, id)
	if len(s.pubs) == 0 {
		s.signalEmpty()
	}
	s.mu.Unlock()
	if !ok {
		return
	}
	var err error
	if code >= 0x80 {
		e := &RefusedError{Op: "publish", Topic: g.m.Topic, Reason: Reason(code)}
		if props != nil {
			e.Detail = props.ReasonString
		}
		err = e
	}
	s.c.settled(&g, err)
}

// Ack is paho's acknowledgement when the handler returns: the client
// acknowledges with ackNow instead.
func (s *session5) Ack(*packets.Publish) error { return nil }

// ackNow acknowledges the message id of QoS qos, received on connection
// conn, unless that connection ended: a persistent session's broker sends
// it again, and a clean session's may have given its identifier to
// another message.
func (s *session5) ackNow(id uint16, qos byte, conn uint64) {
	s.connMu.RLock()
	defer s.connMu.RUnlock()
	if conn == s.conn && conn != 0 {
		_ = s.State.Ack(&packets.Publish{PacketID: id, QoS: qos})
	}
}

// send sends b, the client's own packets for connection conn, on w,
// unless that connection ended (see ackNow).
func (s *session5) send(w *frameConn, b []byte, conn uint64) {
	s.connMu.RLock()
	defer s.connMu.RUnlock()
	if conn == s.conn && conn != 0 {
		_ = w.send(b)
	}
}

// inFlight returns the number of publications the broker has not
// answered.
func (s *session5) inFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pubs)
}

// waitEmpty waits until every publication handed over was answered, or
// ctx ends, and reports which.
func (s *session5) waitEmpty(ctx context.Context) bool {
	s.mu.Lock()
	if len(s.pubs) == 0 {
		s.mu.Unlock()
		return true
	}
	if s.empty == nil {
		s.empty = make(chan struct{})
	}
	ch := s.empty
	s.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// signalEmpty wakes the waiters of waitEmpty; s.mu is held.
func (s *session5) signalEmpty() {
	if s.empty != nil {
		close(s.empty)
		s.empty = nil
	}
}

// SetErrorLogger and SetDebugLogger keep paho's logs off.
func (s *session5) SetErrorLogger(log.Logger) {}
func (s *session5) SetDebugLogger(log.Logger) {}
