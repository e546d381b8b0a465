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
// The poison guard recognizes such a publication after the first loss.
// The broker handles a client's packets in order and acknowledges each
// QoS 1 and 2 publication it accepts, so when it closes the connection
// for a publication, that publication is the oldest one it did not
// acknowledge. When the broker closed the connection (end of file, or a
// reset) within poisonWindow of the last writing of the oldest
// unacknowledged publication, and the very first reconnection attempt
// succeeds (the broker did not go away), that publication is dropped from
// the store before paho sends it again: counted as a failed publication
// and logged with its topic and size. A broker killed while a
// publication was in flight and back within one reconnection attempt, or
// a connection reset by the network in the same circumstances, costs that
// publication too; a broker that stays away for a moment, a blackhole or
// a keep-alive timeout costs nothing. WebSocket connections are not
// watched.

// poisonWindow is how soon after a publication was written a connection
// closed by the broker makes it suspect.
const poisonWindow = time.Second

// poisonGuard watches the publications in paho's store and the losses.
type poisonGuard struct {
	mu       sync.Mutex
	written  map[string]time.Time // outbound QoS 1 and 2 publications by store key: last written
	closedAt time.Time            // when the broker last closed a connection; zero once handled
	attempts int                  // reconnection attempts since then

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
	g.mu.Unlock()
}

func (g *poisonGuard) reset() {
	g.mu.Lock()
	clear(g.written)
	g.mu.Unlock()
}

// connectionError sees the first error of a connection's reads and
// writes.
func (g *poisonGuard) connectionError(err error) {
	if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
		return
	}
	g.mu.Lock()
	g.closedAt, g.attempts = time.Now(), 0
	g.mu.Unlock()
}

// reconnecting counts a reconnection attempt.
func (g *poisonGuard) reconnecting() {
	g.mu.Lock()
	g.attempts++
	g.mu.Unlock()
}

// suspect returns the key of the publication to drop among keys, the
// store's in order, or "". get returns an entry without marking it
// written.
func (g *poisonGuard) suspect(keys []string, get func(string) packets.ControlPacket) (string, *packets.PublishPacket) {
	g.mu.Lock()
	defer g.mu.Unlock()
	closedAt, first := g.closedAt, g.attempts == 1
	if closedAt.IsZero() {
		return "", nil
	}
	g.closedAt = time.Time{}
	if !first {
		return "", nil
	}
	for _, key := range keys {
		pp, ok := isPublish(key, get(key))
		if !ok {
			continue
		}
		at, ok := g.written[key]
		if ok && !at.After(closedAt) && closedAt.Sub(at) <= poisonWindow {
			return key, pp
		}
		return "", nil // the oldest is not suspect
	}
	return "", nil
}

// drop counts and logs the publication dropped as poison.
func (g *poisonGuard) drop(key string, pp *packets.PublishPacket) {
	g.forget(key)
	g.dropped.Add(1)
	g.log.Warn("mqtt: the broker closed the connection on this publication: dropped, not sent again",
		"topic", pp.TopicName, "bytes", len(pp.Payload), "qos", pp.Qos)
}
