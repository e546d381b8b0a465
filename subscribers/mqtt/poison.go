package mqtt

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/eclipse/paho.mqtt.golang/packets"
)

// A broker that refuses a publication from an MQTT 3.1.1 client (too
// large for it, or outside the client's rights) closes the connection:
// the protocol has no other way to say no. paho keeps the publication in
// its store and sends it first after every reconnection, even with a
// clean session, so one publication would hold the connection hostage.
//
// The poison guard recognizes such a publication in two strikes. The
// broker handles a client's packets in order and acknowledges each QoS 1
// and 2 publication it accepts, so when it closes the connection for a
// publication, that publication is the oldest one it did not acknowledge.
// When a connection on which the broker had answered is closed from the
// other end (end of file, or a reset) within poisonWindow of the last
// writing of the oldest unacknowledged publication, that publication is
// suspect: on the next connection paho sends it again after all the
// others, so that they go through whatever happens to it. If the
// connection is closed in the same way again, within poisonWindow of
// that writing, the publication is dropped from the store before paho
// sends it again: counted as a failed publication and logged with its
// topic and size. A refused publication so costs two reconnections, and
// a connection reset by the network, or a broker killed, costs nothing
// but the order of the suspect publication among those sent again.
// WebSocket connections are not watched.

// poisonWindow is how soon after a publication was written a connection
// closed by the broker makes it suspect.
const poisonWindow = time.Second

// poisonGuard watches the publications in paho's store and the losses.
type poisonGuard struct {
	mu        sync.Mutex
	written   map[string]time.Time // outbound QoS 1 and 2 publications by store key: last written
	closedAt  time.Time            // when the broker last closed a connection; zero once handled
	probation string               // the suspect sent again last, until acknowledged

	dropped atomic.Uint64
	log     *slog.Logger
}

func newPoisonGuard(log *slog.Logger) *poisonGuard {
	return &poisonGuard{written: make(map[string]time.Time), log: log}
}

// isPublish reports whether the store entry key, p, is an outbound QoS 1
// or 2 publication.
func isPublish(key string, p packets.ControlPacket) (*packets.PublishPacket, bool) {
	pp, ok := p.(*packets.PublishPacket)
	return pp, ok && pp != nil && pp.Qos > 0 && strings.HasPrefix(key, "o.")
}

// wrote records that the publication under key is being written: stored
// by Publish, or read back from the store to be sent again.
func (g *poisonGuard) wrote(key string) {
	g.mu.Lock()
	g.written[key] = time.Now()
	g.mu.Unlock()
}

func (g *poisonGuard) forget(key string) {
	g.mu.Lock()
	delete(g.written, key)
	if key == g.probation {
		g.probation = ""
	}
	g.mu.Unlock()
}

func (g *poisonGuard) reset() {
	g.mu.Lock()
	clear(g.written)
	g.probation = ""
	g.mu.Unlock()
}

// connectionError sees the first error of the reads and writes of a
// connection on which the broker had answered.
func (g *poisonGuard) connectionError(err error) {
	if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
		return
	}
	g.mu.Lock()
	g.closedAt = time.Now()
	g.mu.Unlock()
}

// suspect returns the key of the suspect publication among keys, the
// store's in order, or "", and whether it is on its second strike. get
// returns an entry without marking it written.
func (g *poisonGuard) suspect(keys []string, get func(string) packets.ControlPacket) (key string, pp *packets.PublishPacket, drop bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	closedAt := g.closedAt
	if closedAt.IsZero() {
		return "", nil, false
	}
	g.closedAt = time.Time{}
	for _, k := range keys {
		p, ok := isPublish(k, get(k))
		if !ok {
			continue
		}
		at, ok := g.written[k]
		if !ok || at.After(closedAt) || closedAt.Sub(at) > poisonWindow {
			return "", nil, false // the oldest is not suspect
		}
		if k == g.probation {
			return k, p, true
		}
		g.probation = k
		return k, p, false
	}
	return "", nil, false
}

// drop counts and logs the publication dropped as poison.
func (g *poisonGuard) drop(key string, pp *packets.PublishPacket) {
	g.forget(key)
	g.dropped.Add(1)
	g.log.Warn("mqtt: the broker closed the connection on this publication: dropped, not sent again",
		"topic", pp.TopicName, "bytes", len(pp.Payload), "qos", pp.Qos)
}
