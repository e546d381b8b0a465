package bus_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/waitset"
)

// recorder is a trace.Observer that keeps every event it sees. Observe may
// be called from any goroutine.
type recorder struct {
	mu     sync.Mutex
	events []trace.Event
}

func (r *recorder) Observe(e trace.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// all returns a copy of every event recorded so far.
func (r *recorder) all() []trace.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]trace.Event(nil), r.events...)
}

// ops returns the events with the given op, in the order recorded.
func (r *recorder) ops(op trace.Op) []trace.Event {
	var out []trace.Event
	for _, e := range r.all() {
		if e.Op == op {
			out = append(out, e)
		}
	}
	return out
}

// seqs returns the Seq of every event with the given op.
func (r *recorder) seqs(op trace.Op) []uint64 {
	out := []uint64{}
	for _, e := range r.ops(op) {
		out = append(out, e.Seq)
	}
	return out
}

// reasons returns the Reason of every Drop event.
func (r *recorder) reasons() []string {
	out := []string{}
	for _, e := range r.ops(trace.Drop) {
		out = append(out, e.Reason)
	}
	return out
}

// fixture is a subscription registered with its own wait set, whose events
// go to a recorder: what an executor would set up, without the executor.
type fixture struct {
	sub *bus.Subscription
	set *waitset.Set
	rec *recorder
}

func newFixture(t testing.TB, filter string, opts bus.Options) fixture {
	t.Helper()
	sub, err := bus.New(filter, opts)
	require.NoError(t, err)
	rec := &recorder{}
	set := waitset.New(nil, rec)
	set.Register(bus.Entity(sub), waitset.Subscription)
	return fixture{sub: sub, set: set, rec: rec}
}

// newSub returns a subscription registered with a wait set that has no
// observer.
func newSub(t testing.TB, filter string, opts bus.Options) *bus.Subscription {
	t.Helper()
	sub, err := bus.New(filter, opts)
	require.NoError(t, err)
	waitset.New(nil, nil).Register(bus.Entity(sub), waitset.Subscription)
	return sub
}

// msg returns a message on topic with the payload p.
func msg(topic, p string) bus.Message {
	return bus.Message{Topic: topic, Payload: []byte(p)}
}

// drain takes every queued message and returns their payloads and
// sequence numbers.
func drain(sub *bus.Subscription) (payloads []string, seqs []uint64) {
	payloads, seqs = []string{}, []uint64{}
	for {
		m, seq, ok, _ := bus.Take(sub)
		if !ok {
			return payloads, seqs
		}
		payloads = append(payloads, string(m.Payload))
		seqs = append(seqs, seq)
	}
}

// fakeSource records the Attach and Detach calls a subscription makes.
type fakeSource struct {
	mu       sync.Mutex
	attached []*bus.Subscription
	detached []*bus.Subscription
}

func (f *fakeSource) Attach(s *bus.Subscription) error {
	s.Attach(f)
	f.mu.Lock()
	f.attached = append(f.attached, s)
	f.mu.Unlock()
	return nil
}

func (f *fakeSource) Detach(s *bus.Subscription) {
	f.mu.Lock()
	f.detached = append(f.detached, s)
	f.mu.Unlock()
}

func (f *fakeSource) detachCalls() []*bus.Subscription {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*bus.Subscription(nil), f.detached...)
}

var _ bus.Source = (*fakeSource)(nil)
var _ bus.Source = (*bus.Router)(nil)
