package bench

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
)

// The run group's load generator and measurer for a forwarder of
// sensors/+/raw to robot/+/data in another process: a producer and a
// consumer, raw paho.mqtt.golang (MQTT 3.1.1) clients with clean
// sessions, the producer publishing QoS 1 messages round-robin over
// WireTopics topics without waiting for the broker.

const (
	// WireTopics is how many sensors/sN/raw topics the messages go to.
	WireTopics = 8
	// wireHeader is a message's phase (1 byte), sequence number (4) and
	// send time (8, nanoseconds since wireEpoch); BridgePayload bytes in
	// all.
	wireHeader = 13
)

// wireEpoch is the origin of the send and arrival times, on the
// monotonic clock.
var wireEpoch = time.Now()

func wireNow() int64 { return int64(time.Since(wireEpoch)) }

// wire is the producer and the consumer. The consumer's handler runs on
// one paho goroutine, in arrival order, and is the only writer of the
// current phase's arrivals.
type wire struct {
	producer, consumer *rawClient
	cur                atomic.Pointer[wirePhase]
	next               byte // the next phase's id
}

// wirePhase is one batch of messages: their send and arrival times by
// sequence number. Messages of other phases are ignored.
type wirePhase struct {
	id   byte
	sent []int64
	recv []int64 // 0 until the message arrives
	got  atomic.Int64
	dups atomic.Int64
	done chan struct{} // closed when every message has arrived
}

// dialWire connects the producer and the consumer to url as id-*.
func dialWire(url, id string) (*wire, error) {
	w := &wire{}
	var err error
	if w.consumer, err = dialRaw(url, id+"-consumer", true, bridgeWait); err != nil {
		return nil, err
	}
	if err = w.consumer.Subscribe("robot/+/data", BridgeQoS, w.arrive); err != nil {
		w.consumer.Close()
		return nil, err
	}
	if w.producer, err = dialRaw(url, id+"-producer", true, bridgeWait); err != nil {
		w.consumer.Close()
		return nil, err
	}
	return w, nil
}

// Close disconnects both clients.
func (w *wire) Close() {
	w.producer.Close()
	w.consumer.Close()
}

// arrive records one forwarded message.
func (w *wire) arrive(_ string, b []byte) {
	now := wireNow()
	p := w.cur.Load()
	if p == nil || len(b) < wireHeader || b[0] != p.id {
		return
	}
	seq := int(binary.BigEndian.Uint32(b[1:]))
	if seq >= len(p.recv) {
		return
	}
	if p.recv[seq] != 0 {
		p.dups.Add(1)
		return
	}
	p.recv[seq] = now
	if p.got.Add(1) == int64(len(p.recv)) {
		close(p.done)
	}
}

// begin starts a phase of n messages.
func (w *wire) begin(n int) *wirePhase {
	w.next++
	p := &wirePhase{id: w.next, sent: make([]int64, n), recv: make([]int64, n), done: make(chan struct{})}
	w.cur.Store(p)
	return p
}

// send publishes message seq of p.
func (w *wire) send(p *wirePhase, seq int) {
	b := make([]byte, BridgePayload) // paho keeps the payload until the broker has it
	b[0] = p.id
	binary.BigEndian.PutUint32(b[1:], uint32(seq))
	p.sent[seq] = wireNow()
	binary.BigEndian.PutUint64(b[5:], uint64(p.sent[seq]))
	w.producer.Publish("sensors/s"+strconv.Itoa(seq%WireTopics)+"/raw", BridgeQoS, b)
}

// wait waits at most timeout for every message of p.
func (p *wirePhase) wait(timeout time.Duration) error {
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("bench: %d of %d forwarded messages arrived within %v", p.got.Load(), len(p.recv), timeout)
	}
}

// ready publishes a message every 100 ms until one comes back forwarded,
// for at most timeout: the forwarder is subscribed.
func (w *wire) ready(timeout time.Duration) error {
	const tries = 1000
	p := w.begin(tries)
	deadline := time.Now().Add(timeout)
	for i := 0; time.Now().Before(deadline) && i < tries; i++ {
		w.send(p, i)
		for range 10 {
			if p.got.Load() > 0 {
				return nil
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return fmt.Errorf("bench: the forwarder forwarded nothing within %v", timeout)
}

// burst publishes n messages as fast as the producer can and returns the
// throughput to the last arrival, in messages a second.
func (w *wire) burst(n int, timeout time.Duration) (float64, error) {
	p := w.begin(n)
	start := wireNow()
	for i := range n {
		w.send(p, i)
	}
	if err := p.wait(timeout); err != nil {
		return 0, err
	}
	if d := p.dups.Load(); d > 0 {
		return 0, fmt.Errorf("bench: %d duplicates in a burst of %d", d, n)
	}
	last := slices.Max(p.recv)
	return float64(n) / time.Duration(last-start).Seconds(), nil
}

// paced publishes rate messages a second for d and returns the one-way
// latencies, sorted.
func (w *wire) paced(rate int, d time.Duration, timeout time.Duration) ([]int64, error) {
	n := max(int(d.Seconds()*float64(rate)), 1)
	p := w.begin(n)
	start := time.Now()
	for i := range n {
		if wait := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))); wait > 0 {
			time.Sleep(wait)
		}
		w.send(p, i)
	}
	if err := p.wait(timeout); err != nil {
		return nil, err
	}
	lat := make([]int64, n)
	for i := range n {
		lat[i] = p.recv[i] - p.sent[i]
	}
	slices.Sort(lat)
	return lat, nil
}
