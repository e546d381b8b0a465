package mqtt_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
)

// TestForwardGoesBeforeItsAcknowledgement: on one processor (what
// robotexec run gives a config of built-in nodes on an external broker),
// a callback that forwards each QoS 1 message it receives writes the
// forward before the client acknowledges the message: the intake lets the
// callback it woke run before it writes its PUBACKs, so the forward does
// not wait for that write. A relay between the client and the broker
// records the order of the client's packets, one message at a time.
func TestForwardGoesBeforeItsAcknowledgement(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	b := mqtttest.Embedded(t, broker.Config{})
	rel := newPacketRelay(t, b.Addr())
	c := dial(t, rel.url(), mqtt.Config{QoS: 1, StatusTopic: "-"})
	topic := "ackorder-" + clientID(t, "t")
	out, err := c.Publisher(topic+"/out", bus.WithQoS(1))
	require.NoError(t, err)
	ex := executor.New(executor.Options{Workers: 2})
	_, err = ex.NewOwner("bridge", nil).Subscribe(c, topic+"/in", func(ctx context.Context, m subscribers.Message) {
		_ = out.Publish(ctx, m.Payload)
	})
	require.NoError(t, err)
	startExecutor(t, ex)
	got := make(chan struct{}, 1)
	watcher := rawClient(t, b.URL())
	tok := watcher.Subscribe(topic+"/out", 1, func(paho.Client, paho.Message) { got <- struct{}{} })
	require.True(t, tok.WaitTimeout(waitFor) && tok.Error() == nil)
	pub := rawClient(t, b.URL())
	const n = 40
	first := 0
	for i := range n {
		rel.reset()
		publish(t, pub, topic+"/in", 1, false, fmt.Sprint(i))
		<-got
		eventually(t, "the acknowledgement", func() bool { return rel.count(typePubackForTest) == 1 })
		if ts := rel.types(); len(ts) == 2 && ts[0] == typePublishForTest {
			first++
		}
	}
	t.Logf("the forward went first for %d of %d messages", first, n)
	require.GreaterOrEqual(t, first, n*3/4, "forwards written before the acknowledgement of their message")
}

// The MQTT packet types the relay tells apart.
const (
	typePublishForTest = 3
	typePubackForTest  = 4
)

// packetRelay relays one client's connections to a broker and records the
// types of the packets the client sends, in order.
type packetRelay struct {
	ln net.Listener
	to string

	mu  sync.Mutex
	log []byte
}

func newPacketRelay(t *testing.T, to string) *packetRelay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &packetRelay{ln: ln, to: to}
	t.Cleanup(func() { _ = ln.Close() })
	go r.serve()
	return r
}

func (r *packetRelay) url() string { return "tcp://" + r.ln.Addr().String() }

func (r *packetRelay) serve() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", r.to)
		if err != nil {
			_ = c.Close()
			continue
		}
		go func() {
			_, _ = io.Copy(c, s)
			_ = c.Close()
		}()
		go func() {
			r.record(io.TeeReader(c, s))
			_ = s.Close()
		}()
	}
}

// record reads the client's packets from rd (which relays them) and logs
// their types.
func (r *packetRelay) record(rd io.Reader) {
	var hdr [1]byte
	for {
		if _, err := io.ReadFull(rd, hdr[:]); err != nil {
			return
		}
		n, err := remainingLength(rd)
		if err != nil {
			return
		}
		if _, err := io.CopyN(io.Discard, rd, int64(n)); err != nil {
			return
		}
		r.mu.Lock()
		r.log = append(r.log, hdr[0]>>4)
		r.mu.Unlock()
	}
}

// remainingLength reads a packet's variable-length remaining length.
func remainingLength(rd io.Reader) (int, error) {
	var b [1]byte
	n, shift := 0, 0
	for {
		if _, err := io.ReadFull(rd, b[:]); err != nil {
			return 0, err
		}
		n |= int(b[0]&0x7f) << shift
		if b[0]&0x80 == 0 {
			return n, nil
		}
		shift += 7
	}
}

func (r *packetRelay) reset() {
	r.mu.Lock()
	r.log = nil
	r.mu.Unlock()
}

// types returns the publications and acknowledgements recorded, in order.
func (r *packetRelay) types() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ts []byte
	for _, t := range r.log {
		if t == typePublishForTest || t == typePubackForTest {
			ts = append(ts, t)
		}
	}
	return ts
}

func (r *packetRelay) count(typ byte) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := 0
	for _, t := range r.log {
		if t == typ {
			k++
		}
	}
	return k
}
