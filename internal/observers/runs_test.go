package observers_test

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/chrometrace"
	"github.com/robotexec/robotexec/internal/observers"
	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
	"github.com/robotexec/robotexec/waitset"
)

func TestBucketBounds(t *testing.T) {
	b := observers.BucketBounds()
	require.Len(t, b, observers.Buckets)
	require.InDelta(t, 1e-6, b[0], 1e-18)
	require.InDelta(t, 2e-6, b[1], 1e-18)
	require.InDelta(t, 16.777216, b[len(b)-1], 1e-9, "up to ~10 s and beyond")
}

// spinRig is an executor with Runs on worker 0, driven by Spin calls.
type spinRig struct {
	ex    *executor.Executor
	runs  *observers.Runs
	trace *chrometrace.Recorder
	bus   *subscribers.Router
	clock *timers.Sim
	node  *executor.Owner
}

func newSpinRig(t *testing.T) *spinRig {
	t.Helper()
	tr := chrometrace.New(1, 0)
	runs := observers.New(observers.Options{Workers: 1, Trace: tr})
	clock := timers.NewSim(time.Unix(1000, 0))
	ex := executor.New(executor.Options{Workers: 1, Runs: runs, Stamp: runs.Stamp, Clock: clock})
	runs.Register(ex) // before any callback: each is named on its first run
	return &spinRig{ex: ex, runs: runs, trace: tr, bus: new(subscribers.Router), clock: clock, node: ex.NewOwner("node", nil)}
}

func (r *spinRig) record(t *testing.T, callback string) *observers.Record {
	t.Helper()
	for _, rec := range r.runs.Records() {
		if rec.Callback == callback {
			return rec
		}
	}
	t.Fatalf("no record of %q", callback)
	return nil
}

func (r *spinRig) checkTrace(t *testing.T) *tracecheck.ChromeSummary {
	t.Helper()
	var buf bytes.Buffer
	_, err := r.runs.WriteTrace(&buf, chrometrace.WriteOptions{})
	require.NoError(t, err)
	s, err := tracecheck.ChromeTrace(&buf)
	require.NoError(t, err)
	return s
}

func TestSubscriptionRuns(t *testing.T) {
	r := newSpinRig(t)
	sub, err := r.node.Subscribe(r.bus, "in", func(ctx context.Context, m subscribers.Message) {
		if string(m.Payload) == "slow" {
			time.Sleep(3 * time.Millisecond)
		}
	}, executor.Name("input"), executor.Depth(100))
	require.NoError(t, err)
	r.runs.Register(r.ex)
	pub, _ := r.bus.Publisher("in")
	for range 9 {
		pub.Publish(context.Background(), []byte("fast"))
	}
	pub.Publish(context.Background(), []byte("slow"))
	require.Equal(t, 10, r.ex.SpinAll())

	rec := r.record(t, "input")
	require.Equal(t, sub.ID(), rec.ID)
	require.Equal(t, "node", rec.Node)
	require.Equal(t, waitset.Subscription, rec.Kind)
	d := rec.Duration()
	require.Equal(t, uint64(10), d.Count)
	// 3 ms falls in (2.048 ms, 4.096 ms]: bucket 12 (1 µs · 2^12).
	require.GreaterOrEqual(t, countFrom(d, 12), uint64(1), "the slow run: %v", d.Counts)
	require.GreaterOrEqual(t, d.Sum, int64(3*time.Millisecond))
	l := rec.Latency()
	require.Equal(t, uint64(10), l.Count, "every message has a latency")
	// The last message waited for the nine before it and the slow one
	// ran last; the first nine waited less than the slow run.
	require.Positive(t, l.Sum)

	s := r.checkTrace(t)
	require.Equal(t, 10, s.Runs)
	require.Equal(t, map[uint64]int{sub.ID(): 10}, s.PerEntity)
}

func countFrom(s observers.HistogramSnapshot, k int) uint64 {
	var n uint64
	for _, c := range s.Counts[k:] {
		n += c
	}
	return n
}

func TestDeepQueue(t *testing.T) {
	r := newSpinRig(t)
	_, err := r.node.Subscribe(r.bus, "in", func(ctx context.Context, _ subscribers.Message) {}, executor.Name("deep"),
		executor.Depth(1000), executor.Overflow(subscribers.DropNewest))
	require.NoError(t, err)
	pub, _ := r.bus.Publisher("in")
	for range 1500 {
		pub.Publish(context.Background(), []byte("x")) // 500 dropped
	}
	require.Equal(t, 1000, r.ex.SpinAll())
	rec := r.record(t, "deep")
	require.Equal(t, uint64(1000), rec.Duration().Count, "every run is timed")
	require.Equal(t, uint64(1000), rec.Latency().Count, "and has a latency, from its message's Received")
}

// A message without a Received time (delivered straight to the
// subscription) has a duration and no latency.
func TestMessageWithoutReceivedTime(t *testing.T) {
	r := newSpinRig(t)
	sub, err := r.node.Subscribe(r.bus, "in", func(ctx context.Context, _ subscribers.Message) {}, executor.Name("raw"))
	require.NoError(t, err)
	require.True(t, sub.Deliver(subscribers.Message{Topic: "in"}))
	require.Equal(t, 1, r.ex.SpinAll())
	rec := r.record(t, "raw")
	require.Equal(t, uint64(1), rec.Duration().Count)
	require.Zero(t, rec.Latency().Count)
}

func TestTimerRuns(t *testing.T) {
	r := newSpinRig(t)
	ticks := 0
	_, err := r.node.Timer(10*time.Millisecond, func(ctx context.Context, _ timers.Event) { ticks++ })
	require.NoError(t, err)
	for range 5 {
		r.clock.Advance(10 * time.Millisecond)
		require.Equal(t, 1, r.ex.SpinAll())
	}
	require.Equal(t, 5, ticks)
	rec := r.record(t, "timer(10ms)")
	require.Equal(t, waitset.Timer, rec.Kind)
	require.Equal(t, uint64(5), rec.Duration().Count)
	require.Equal(t, uint64(5), rec.Latency().Count, "from each deadline to the start")
	s := r.checkTrace(t)
	require.Equal(t, 5, s.Runs)
	require.Equal(t, "timer", r.runs.Describe(rec.ID).Kind)
}

func TestForeignEntity(t *testing.T) {
	runs := observers.New(observers.Options{Workers: 1, MonotonicClock: true})
	require.Equal(t, "monotonic", runs.Clock())
	const id = 7 // no executor's: Register was not called
	start := runs.Stamp()
	runs.Ran(executor.Run{Worker: 0, ID: id, Trigger: time.Now(), Start: start, End: start + 10})
	runs.Ran(executor.Run{Worker: 0, ID: id, Start: start, End: start + 10}) // no trigger
	runs.Ran(executor.Run{Worker: 5, ID: id, Start: start, End: start + 10}) // a worker beyond Workers: not recorded

	recs := runs.Records()
	require.Len(t, recs, 1)
	require.Equal(t, fmt.Sprintf("entity %d", id), recs[0].Callback)
	require.Empty(t, recs[0].Node)
	require.Equal(t, uint64(2), recs[0].Duration().Count)
	require.Equal(t, uint64(1), recs[0].Latency().Count)
	require.Nil(t, runs.Lookup(id+1000))
	require.Equal(t, chrometrace.Entity{Callback: "entity 999"}, runs.Describe(999))
}

func TestManyEntitiesGrowTheTable(t *testing.T) {
	runs := observers.New(observers.Options{Workers: 1})
	for id := range uint64(1000) {
		runs.Ran(executor.Run{ID: id + 1})
	}
	require.Len(t, runs.Records(), 1000)
	for id := range uint64(1000) {
		require.Equal(t, id+1, runs.Lookup(id+1).ID)
	}
}

func TestNewPanics(t *testing.T) {
	require.Panics(t, func() { observers.New(observers.Options{}) })
	require.Panics(t, func() { observers.New(observers.Options{Workers: 2, Trace: chrometrace.New(1, 0)}) })
}

// TestRunConcurrent runs messages and timers on four workers under -race
// and checks that every run is timed and traced once, on its worker's
// track, without overlap.
func TestRunConcurrent(t *testing.T) {
	const workers, subs, msgs = 4, 8, 2000
	tr := chrometrace.New(workers, 0)
	runs := observers.New(observers.Options{Workers: workers, Trace: tr})
	ex := executor.New(executor.Options{Workers: workers, Runs: runs, Stamp: runs.Stamp})
	bus := new(subscribers.Router)
	var ran atomic.Int64
	all := make(chan struct{})
	pubs := make([]*subscribers.Publisher, subs)
	for i := range subs {
		node := ex.NewOwner(fmt.Sprintf("node%d", i%3), ex.NewGroup("g", executor.Reentrant))
		topic := fmt.Sprintf("t/%d", i)
		_, err := node.Subscribe(bus, topic, func(ctx context.Context, _ subscribers.Message) {
			if ran.Add(1) == msgs {
				close(all)
			}
		}, executor.Depth(64), executor.Overflow(subscribers.Block))
		require.NoError(t, err)
		pubs[i], _ = bus.Publisher(topic)
	}
	_, err := ex.NewOwner("ticker", nil).Timer(time.Millisecond, func(ctx context.Context, _ timers.Event) {})
	require.NoError(t, err)
	runs.Register(ex)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	for i := range msgs {
		pubs[i%subs].Publish(ctx, []byte("x"))
	}
	select {
	case <-all:
	case <-time.After(30 * time.Second):
		t.Fatal("the messages did not run within 30 s")
	}
	cancel()
	require.NoError(t, <-done)

	total := ex.Stats().Runs
	var timed, latencies uint64
	for _, rec := range runs.Records() {
		timed += rec.Duration().Count
		latencies += rec.Latency().Count
	}
	require.Equal(t, total, timed, "one duration per run")
	require.GreaterOrEqual(t, latencies, uint64(msgs), "a latency per message at least")
	var buf bytes.Buffer
	_, err = runs.WriteTrace(&buf, chrometrace.WriteOptions{})
	require.NoError(t, err)
	s, err := tracecheck.ChromeTrace(&buf)
	require.NoError(t, err)
	require.Equal(t, int(total), s.Runs, "one trace event per run")
	for tid := range s.PerTrack {
		require.True(t, tid >= 1 && tid <= workers, "tid %d", tid)
	}
}

func TestWriteTraceWithoutRecorder(t *testing.T) {
	runs := observers.New(observers.Options{Workers: 1})
	_, err := runs.WriteTrace(&bytes.Buffer{}, chrometrace.WriteOptions{})
	require.ErrorContains(t, err, "no trace recorder")
}

func TestCallbackRegisteredAfterRegister(t *testing.T) {
	r := newSpinRig(t) // registers the executor before its callbacks
	_, err := r.node.Subscribe(r.bus, "late", func(ctx context.Context, _ subscribers.Message) {}, executor.Name("late"))
	require.NoError(t, err)
	pub, _ := r.bus.Publisher("late")
	pub.Publish(context.Background(), []byte("x"))
	require.Equal(t, 1, r.ex.SpinAll())

	rec := r.record(t, "late")
	require.Equal(t, "node", rec.Node, "named on its first run, by the executor")
	require.Equal(t, waitset.Subscription, rec.Kind)
	require.Equal(t, uint64(1), rec.Duration().Count)
}
