package mqtt_test

import (
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/stretchr/testify/require"
)

// fakeBroker is an MQTT 5 broker scripted by a test, for what no real
// broker does: it accepts one connection a script, one after the other,
// answers its CONNECT, SUBSCRIBEs and UNSUBSCRIBEs, and runs the script
// on the connection.
type fakeBroker struct {
	ln      net.Listener
	scripts []func(c net.Conn, r *packetReader)
	done    chan struct{}
	acks    chan uint16 // the identifiers of the client's PUBACKs

	// holdPubcomp keeps the connections made after it is set from
	// answering PUBRELs: QoS 2 publications stay unfinished.
	holdPubcomp atomic.Bool
	// holdSuback keeps the connections made after it is set from
	// answering SUBSCRIBEs.
	holdSuback atomic.Bool
}

func newFakeBroker(t *testing.T, scripts ...func(c net.Conn, r *packetReader)) *fakeBroker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &fakeBroker{ln: ln, scripts: scripts, done: make(chan struct{}), acks: make(chan uint16, 16)}
	go f.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		<-f.done
	})
	return f
}

func (f *fakeBroker) URL() string { return "tcp://" + f.ln.Addr().String() }

func (f *fakeBroker) serve() {
	defer close(f.done)
	for _, script := range f.scripts {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.run(c, script)
	}
}

// run answers c's CONNECT and runs script on c.
func (f *fakeBroker) run(c net.Conn, script func(c net.Conn, r *packetReader)) {
	defer c.Close()
	r := &packetReader{c: c, acks: f.acks, subs: make(chan struct{}, 16), pubs: make(chan string, 16), gone: make(chan struct{}),
		holdPubcomp: f.holdPubcomp.Load(), holdSuback: f.holdSuback.Load()}
	if p, err := packets.ReadPacket(c); err != nil || p.Type != packets.CONNECT {
		return
	}
	ack := packets.Connack{Properties: &packets.Properties{}}
	if _, err := ack.WriteTo(c); err != nil {
		return
	}
	go r.run()
	script(c, r)
	// Keep the connection until the client goes.
	<-r.gone
}

// packetReader reads what the client sends: it answers SUBSCRIBEs,
// UNSUBSCRIBEs, PINGREQs and PUBLISHes (PUBACK, PUBREC, and PUBCOMP for
// a PUBREL), reports PUBACKs on acks and the topics of PUBLISHes on pubs.
type packetReader struct {
	c    net.Conn
	acks chan uint16
	subs chan struct{}
	pubs chan string
	gone chan struct{}

	holdPubcomp, holdSuback bool
}

func (r *packetReader) run() {
	defer close(r.gone)
	for {
		p, err := packets.ReadPacket(r.c)
		if err != nil {
			return
		}
		switch p.Type {
		case packets.SUBSCRIBE:
			if r.holdSuback {
				continue
			}
			s := p.Content.(*packets.Subscribe)
			sa := packets.Suback{PacketID: s.PacketID, Reasons: make([]byte, len(s.Subscriptions)), Properties: &packets.Properties{}}
			_, _ = sa.WriteTo(r.c)
			r.subs <- struct{}{}
		case packets.UNSUBSCRIBE:
			u := p.Content.(*packets.Unsubscribe)
			ua := packets.Unsuback{PacketID: u.PacketID, Reasons: make([]byte, len(u.Topics)), Properties: &packets.Properties{}}
			_, _ = ua.WriteTo(r.c)
		case packets.PINGREQ:
			_, _ = packets.NewControlPacket(packets.PINGRESP).WriteTo(r.c)
		case packets.PUBACK:
			r.acks <- p.Content.(*packets.Puback).PacketID
		case packets.PUBLISH:
			r.answer(p.Content.(*packets.Publish))
		case packets.PUBREL:
			if r.holdPubcomp {
				continue
			}
			pc := packets.Pubcomp{PacketID: p.Content.(*packets.Pubrel).PacketID, Properties: &packets.Properties{}}
			_, _ = pc.WriteTo(r.c)
		}
	}
}

// answer acknowledges pb and reports its topic.
func (r *packetReader) answer(pb *packets.Publish) {
	switch pb.QoS {
	case 1:
		pa := packets.Puback{PacketID: pb.PacketID, Properties: &packets.Properties{}}
		_, _ = pa.WriteTo(r.c)
	case 2:
		pr := packets.Pubrec{PacketID: pb.PacketID, Properties: &packets.Properties{}}
		_, _ = pr.WriteTo(r.c)
	}
	r.pubs <- pb.Topic
}

// writeHugePublish writes a QoS 1 PUBLISH on topic, identifier id, whose
// header claims size bytes of payload, and then the payload: zeros.
func writeHugePublish(c net.Conn, topic string, id uint16, size int) error {
	rl := 2 + len(topic) + 2 + 1 + size
	hdr := []byte{0x32}
	for v := rl; ; {
		b := byte(v & 0x7f)
		v >>= 7
		if v > 0 {
			b |= 0x80
		}
		hdr = append(hdr, b)
		if v == 0 {
			break
		}
	}
	hdr = append(hdr, byte(len(topic)>>8), byte(len(topic)))
	hdr = append(hdr, topic...)
	hdr = append(hdr, byte(id>>8), byte(id), 0)
	_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(hdr); err != nil {
		return err
	}
	_, err := io.CopyN(c, zeros{}, int64(size))
	return err
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
