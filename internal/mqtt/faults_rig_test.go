package mqtt_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/subscribers"
)

// arrivals records when the first copy of each numbered message arrived
// at the subscriber, and how many copies came.
type arrivals struct {
	mu     sync.Mutex
	first  []time.Time // by sequence number; zero until it arrives
	copies int
	bad    int // payloads that are no sequence number in range
}

// add is the subscription's callback; payloads are "SEQ" or "SEQ:padding".
func (a *arrivals) add(_ context.Context, m subscribers.Message) {
	num, _, _ := strings.Cut(string(m.Payload), ":")
	seq, err := strconv.Atoi(num)
	a.mu.Lock()
	switch {
	case err != nil || seq < 0 || seq >= len(a.first):
		a.bad++
	case a.first[seq].IsZero():
		a.first[seq] = m.Received
	}
	a.copies++
	a.mu.Unlock()
}

// counts returns the distinct messages received, the duplicates, and the
// payloads that were no message sent.
func (a *arrivals) counts() (distinct, dups, bad int) {
	n, _ := a.missing(0)
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.first) - n, a.copies - (len(a.first) - n) - a.bad, a.bad
}

// missing returns how many messages numbered k or more have not arrived,
// and the first of them (up to 10).
func (a *arrivals) missing(k int) (n int, first []int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := min(k, len(a.first)); i < len(a.first); i++ {
		if a.first[i].IsZero() {
			if n++; len(first) < 10 {
				first = append(first, i)
			}
		}
	}
	return n, first
}

// firstFrom returns when the first message numbered k or more arrived,
// zero if none did.
func (a *arrivals) firstFrom(k int) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	var at time.Time
	for _, t := range a.first[min(k, len(a.first)):] {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	return at
}

// await polls cond every 5 ms for up to d; it reports whether cond held.
func await(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// rig is a publisher client, a subscriber client whose subscription to
// the rig's topic records the arrivals, and the figures of the stream
// between them.
type rig struct {
	pub, sub *mqtt.Client
	topic    string
	got      *arrivals
	n        int
	sent     atomic.Int64 // messages whose Publish returned
	sentAt   []time.Time  // by sequence number; the publisher's until done
	done     chan error
}

// newRig dials the subscriber at subURL, the publisher at pubURL with
// pubCfg (QoS 1, a persistent session), and attaches the subscription.
func newRig(t *testing.T, subURL, pubURL string, n int, pubCfg mqtt.Config) *rig {
	t.Helper()
	sub := dial(t, subURL, mqtt.Config{QoS: 1, ClientID: clientID(t, "sub"), MaxBackoff: 500 * time.Millisecond})
	ex := executor.New(executor.Options{Workers: 1})
	got := &arrivals{first: make([]time.Time, n)}
	topic := "fault/" + sub.ClientID()
	_, err := ex.NewOwner("sink", nil).Subscribe(sub, topic, got.add,
		executor.Depth(100), executor.Overflow(subscribers.Block))
	require.NoError(t, err)
	startExecutor(t, ex)
	pubCfg.QoS, pubCfg.ClientID = 1, clientID(t, "pub")
	pub := dial(t, pubURL, pubCfg)
	return &rig{pub: pub, sub: sub, topic: topic, got: got, n: n, sentAt: make([]time.Time, n), done: make(chan error, 1)}
}

// publish starts publishing messages 0 to n-1 on the rig's topic, the i-th
// at i × every from now, each padded to size bytes.
func (r *rig) publish(t *testing.T, every time.Duration, size int) {
	p, err := r.pub.Publisher(r.topic, bus.WithQoS(1))
	require.NoError(t, err)
	go func() {
		start := time.Now()
		for i := range r.n {
			if d := time.Until(start.Add(time.Duration(i) * every)); d > 0 {
				time.Sleep(d) // pacing
			}
			payload := strconv.Itoa(i) + ":" + strings.Repeat("x", max(0, size-8))
			r.sentAt[i] = time.Now()
			// A QoS 1 publication fails only when the client is closed
			// or 65,536 wait for the broker.
			if err := p.Publish(context.Background(), []byte(payload)); err != nil {
				r.done <- fmt.Errorf("publish %d: %w", i, err)
				return
			}
			r.sent.Add(1)
		}
		r.done <- nil
	}()
}

// finish waits up to within for the publisher to end, then for every
// message. It fails the test for a message lost, a failed publication
// and a message never sent, and returns the number of duplicates.
func (r *rig) finish(t *testing.T, within time.Duration) (dups int) {
	t.Helper()
	r.wait(t, within)
	await(waitFor, func() bool { n, _ := r.got.missing(0); return n == 0 })
	lost, missing := r.got.missing(0)
	_, dups, bad := r.got.counts()
	require.Zero(t, bad, "payloads of no message sent")
	st := r.pub.Stats()
	require.Zero(t, lost, "lost %d of %d, first missing %v; publisher %+v; subscriber %+v", lost, r.n, missing, st, r.sub.Stats())
	require.Zero(t, st.PublishFailed, "failed publications; publisher %+v", st)
	return dups
}

// wait waits up to within for the publisher to end.
func (r *rig) wait(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case err := <-r.done:
		require.NoError(t, err)
	case <-time.After(within):
		t.Fatalf("the publisher did not finish within %v (%d sent)", within, r.sent.Load())
	}
}
