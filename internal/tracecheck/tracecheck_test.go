package tracecheck_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/waitset"
)

// tracer builds a trace by hand: ops on entities of a fresh set.
type tracer struct {
	set    *waitset.Set
	ents   map[string]*waitset.Entity
	rec    tracecheck.Recorder
	batch  uint64
	ready  map[string]uint64
	worker int // the worker of the steps recorded next
}

func newTrace(timers, subs []string) *tracer {
	tr := &tracer{set: waitset.New(nil, nil), ents: map[string]*waitset.Entity{}, ready: map[string]uint64{}}
	for _, n := range timers {
		e := &waitset.Entity{}
		tr.set.Register(e, waitset.Timer)
		tr.ents[n] = e
	}
	for _, n := range subs {
		e := &waitset.Entity{}
		tr.set.Register(e, waitset.Subscription)
		tr.ents[n] = e
	}
	return tr
}

func (tr *tracer) step(op trace.Op, name string, seq uint64) {
	ev := trace.Event{Op: op, ID: tr.ents[name].ID(), Timer: tr.ents[name].Kind() == waitset.Timer, Seq: seq, Batch: tr.batch, Worker: tr.worker}
	switch op {
	case trace.Ready:
		tr.ready[name]++
		ev.Seq = tr.ready[name]
	case trace.Enqueue:
		ev.Seq = tr.ready[name]
	}
	tr.rec.Observe(ev)
}

// cycle records a full, well-formed run of each named entity as one batch.
func (tr *tracer) cycle(names ...string) {
	tr.batch++
	for _, n := range names {
		tr.step(trace.Ready, n, 0)
	}
	for _, n := range names {
		tr.step(trace.Enqueue, n, 0)
	}
	for _, n := range names {
		tr.step(trace.Dequeue, n, 0)
		tr.step(trace.Start, n, 0)
		tr.step(trace.Finish, n, 0)
	}
}

func (tr *tracer) check(m tracecheck.Model) error { return tracecheck.Check(tr.rec.Steps(), m) }

func TestCheckAcceptsAWellFormedTrace(t *testing.T) {
	tr := newTrace([]string{"t"}, []string{"a", "b"})
	tr.cycle("t", "a", "b")
	tr.cycle("a")
	require.NoError(t, tr.check(tracecheck.Model{Workers: 1, Drained: true}))
	require.Len(t, tr.rec.Steps(), 20)
}

// A due timer may form a batch of its own while subscriptions are queued,
// and runs ahead of them.
func TestCheckAcceptsTimersAheadOfQueuedSubscriptions(t *testing.T) {
	tr := newTrace([]string{"t"}, []string{"a", "b"})
	tr.batch = 1
	for _, n := range []string{"a", "b"} {
		tr.step(trace.Ready, n, 0)
		tr.step(trace.Enqueue, n, 0)
	}
	tr.batch = 2
	tr.step(trace.Ready, "t", 0)
	tr.step(trace.Enqueue, "t", 0)
	for _, n := range []string{"t", "a", "b"} {
		tr.step(trace.Dequeue, n, 0)
		tr.step(trace.Start, n, 0)
		tr.step(trace.Finish, n, 0)
	}
	require.NoError(t, tr.check(tracecheck.Model{Workers: 1, Drained: true}))
}

// start records name becoming ready, queued in batch 1, dequeued and
// started with message seq.
func (tr *tracer) start(name string, seq uint64) {
	tr.batch = 1
	tr.step(trace.Ready, name, 0)
	tr.step(trace.Enqueue, name, 0)
	tr.step(trace.Dequeue, name, 0)
	tr.step(trace.Start, name, seq)
}

// runBatch records a run of subscription name serving messages first..last
// of its queue, accepted beforehand.
func (tr *tracer) runBatch(name string, first, last uint64) {
	tr.batch++
	for seq := first; seq <= last; seq++ {
		tr.step(trace.Accept, name, seq)
	}
	tr.step(trace.Ready, name, 0)
	tr.step(trace.Enqueue, name, 0)
	tr.step(trace.Dequeue, name, 0)
	tr.step(trace.Start, name, first)
	for seq := first + 1; seq <= last; seq++ {
		tr.step(trace.Next, name, seq)
	}
	tr.step(trace.Finish, name, 0)
}

// A subscription's run may serve a batch of messages, up to the model's
// bound, each a Next step after the run's Start.
func TestCheckAcceptsBatches(t *testing.T) {
	tr := newTrace(nil, []string{"a"})
	tr.runBatch("a", 1, 4)
	tr.runBatch("a", 5, 5)
	require.NoError(t, tr.check(tracecheck.Model{Workers: 1, Drained: true, Batch: 4}))
}

func TestCheckFindsBatchViolations(t *testing.T) {
	tests := []struct {
		name  string
		build func(tr *tracer)
		model tracecheck.Model
		want  string
	}{
		{"batch too long", func(tr *tracer) { tr.runBatch("a", 1, 3) }, tracecheck.Model{Batch: 2}, "run serves more than 2 messages"},
		{"batch without the option", func(tr *tracer) { tr.runBatch("a", 1, 2) }, tracecheck.Model{}, "run serves more than 1 messages"},
		{"next outside a run", func(tr *tracer) {
			tr.runBatch("a", 1, 1)
			tr.step(trace.Accept, "a", 2)
			tr.step(trace.Next, "a", 2)
		}, tracecheck.Model{Batch: 8}, "next outside a run"},
		{"next on another worker", func(tr *tracer) {
			tr.step(trace.Accept, "a", 1)
			tr.step(trace.Accept, "a", 2)
			tr.start("a", 1)
			tr.worker = 1
			tr.step(trace.Next, "a", 2)
		}, tracecheck.Model{Batch: 8}, "next on worker 1 in a run on worker 0"},
		{"next of a timer", func(tr *tracer) {
			tr.start("t", 0)
			tr.step(trace.Next, "t", 0)
		}, tracecheck.Model{Batch: 8}, "next in a run of a timer"},
		{"next after an empty take", func(tr *tracer) {
			tr.step(trace.Accept, "a", 1)
			tr.start("a", 0)
			tr.step(trace.Next, "a", 1)
		}, tracecheck.Model{Batch: 8}, "next in a run that found its queue empty"},
		{"next without a message", func(tr *tracer) {
			tr.step(trace.Accept, "a", 1)
			tr.start("a", 1)
			tr.step(trace.Next, "a", 0)
		}, tracecheck.Model{Batch: 8}, "next without a message"},
		{"two runs on one worker", func(tr *tracer) {
			tr.batch = 1
			for _, n := range []string{"t", "a"} {
				tr.step(trace.Ready, n, 0)
				tr.step(trace.Enqueue, n, 0)
			}
			tr.step(trace.Dequeue, "t", 0)
			tr.step(trace.Dequeue, "a", 0)
			tr.step(trace.Start, "t", 0)
			tr.step(trace.Start, "a", 0)
		}, tracecheck.Model{Batch: 8}, "starts on worker 0, which runs entity 1"},
		{"finish on another worker", func(tr *tracer) {
			tr.start("t", 0)
			tr.worker = 1
			tr.step(trace.Finish, "t", 0)
		}, tracecheck.Model{}, "finishes on worker 1 a run started on worker 0"},
		{"batch out of order", func(tr *tracer) {
			tr.step(trace.Accept, "a", 1)
			tr.step(trace.Accept, "a", 2)
			tr.start("a", 2)
			tr.step(trace.Next, "a", 1)
		}, tracecheck.Model{Batch: 8}, "runs message 1 after message 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTrace([]string{"t"}, []string{"a"})
			tc.build(tr)
			err := tr.check(tc.model)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestCheckFindsViolations(t *testing.T) {
	tests := []struct {
		name  string
		build func(tr *tracer)
		model tracecheck.Model
		want  string
	}{
		{"overlap with itself", func(tr *tracer) {
			tr.batch = 1
			tr.step(trace.Ready, "a", 0)
			tr.step(trace.Enqueue, "a", 0)
			tr.step(trace.Dequeue, "a", 0)
			tr.step(trace.Start, "a", 0)
			tr.step(trace.Start, "a", 0)
		}, tracecheck.Model{}, "start, want finish"},
		{"not drained", func(tr *tracer) {
			tr.batch = 1
			tr.step(trace.Ready, "a", 0)
			tr.step(trace.Enqueue, "a", 0)
		}, tracecheck.Model{Drained: true}, "did not drain"},
		{"ready never enqueued", func(tr *tracer) {
			tr.step(trace.Ready, "a", 0)
		}, tracecheck.Model{Drained: true}, "became ready 1 times and was enqueued 0 times"},
		{"timer after subscription", func(tr *tracer) {
			tr.batch = 1
			tr.step(trace.Ready, "a", 0)
			tr.step(trace.Ready, "t", 0)
			tr.step(trace.Enqueue, "a", 0)
			tr.step(trace.Enqueue, "t", 0)
		}, tracecheck.Model{}, "timer 1 enqueued after subscription 2"},
		{"group overlap", func(tr *tracer) {
			tr.batch = 1
			for _, n := range []string{"a", "b"} {
				tr.step(trace.Ready, n, 0)
				tr.step(trace.Enqueue, n, 0)
			}
			tr.step(trace.Dequeue, "a", 0)
			tr.step(trace.Dequeue, "b", 0)
			tr.step(trace.Start, "a", 0)
			tr.step(trace.Start, "b", 0)
		}, tracecheck.Model{Group: map[uint64]string{2: "g", 3: "g"}}, `starts while entity 2 of group "g" runs`},
		{"fifo per subscription", func(tr *tracer) {
			tr.step(trace.Accept, "a", 1)
			tr.step(trace.Accept, "a", 2)
			tr.step(trace.Start, "a", 2)
			tr.step(trace.Finish, "a", 0)
			tr.step(trace.Start, "a", 1)
		}, tracecheck.Model{}, "runs message 1 after message 2"},
		{"message lost", func(tr *tracer) {
			tr.step(trace.Accept, "a", 1)
			tr.step(trace.Accept, "a", 2)
			tr.step(trace.Drop, "a", 1)
		}, tracecheck.Model{Drained: true}, "accepted message 2 was neither run nor dropped"},
		{"run twice", func(tr *tracer) {
			tr.step(trace.Accept, "a", 1)
			tr.step(trace.Drop, "a", 1)
			tr.step(trace.Start, "a", 1)
		}, tracecheck.Model{}, "message 1 run after it was dropped"},
		{"accept out of order", func(tr *tracer) {
			tr.step(trace.Accept, "a", 2)
		}, tracecheck.Model{}, "accepted message 2 after 0"},
		{"run before accept", func(tr *tracer) {
			tr.step(trace.Start, "a", 1)
		}, tracecheck.Model{}, "runs message 1 before accepting it"},
		{"run queue not FIFO", func(tr *tracer) {
			tr.batch = 1
			tr.step(trace.Ready, "a", 0)
			tr.step(trace.Ready, "b", 0)
			tr.step(trace.Enqueue, "a", 0)
			tr.step(trace.Enqueue, "b", 0)
			tr.step(trace.Dequeue, "b", 0)
		}, tracecheck.Model{}, "dequeued out of FIFO order"},
		{"batch while queued", func(tr *tracer) {
			tr.batch = 1
			tr.step(trace.Ready, "a", 0)
			tr.step(trace.Enqueue, "a", 0)
			tr.batch = 2
			tr.step(trace.Ready, "b", 0)
			tr.step(trace.Enqueue, "b", 0)
		}, tracecheck.Model{}, "batch 2 with subscriptions formed while 1 entities were queued"},
		{"subscription ahead of a queued timer", func(tr *tracer) {
			tr.batch = 1
			tr.step(trace.Ready, "t", 0)
			tr.step(trace.Ready, "a", 0)
			tr.step(trace.Enqueue, "t", 0)
			tr.step(trace.Enqueue, "a", 0)
			tr.step(trace.Dequeue, "a", 0)
		}, tracecheck.Model{}, "subscription 2 dequeued while timer 1 was queued"},
		{"starved", func(tr *tracer) {
			tr.batch = 1
			tr.step(trace.Ready, "b", 0) // b became ready, yet a runs three times first
			tr.step(trace.Ready, "a", 0)
			tr.step(trace.Enqueue, "a", 0)
			tr.step(trace.Dequeue, "a", 0)
			tr.cycle("a")
			tr.cycle("a")
			tr.batch++
			tr.step(trace.Enqueue, "b", 0)
			tr.step(trace.Dequeue, "b", 0)
		}, tracecheck.Model{Entities: 2}, "subscription 3 dequeued after 3 other subscriptions since it became ready; bound 1"},
		{"mute without its subscription", func(tr *tracer) {
			tr.rec.Observe(trace.Event{Op: trace.Mute, ID: tr.ents["a"].ID(), Timer: tr.ents["a"].Kind() == waitset.Timer, Resource: 3})
		}, tracecheck.Model{}, "mute of entity 2 names overloaded subscription 0 and resource 3"},
		{"unmute by another subscription", func(tr *tracer) {
			tr.rec.Observe(trace.Event{Op: trace.Mute, ID: tr.ents["a"].ID(), Timer: tr.ents["a"].Kind() == waitset.Timer, Overloaded: 3})
			tr.rec.Observe(trace.Event{Op: trace.Unmute, ID: tr.ents["a"].ID(), Timer: tr.ents["a"].Kind() == waitset.Timer, Overloaded: 1})
		}, tracecheck.Model{}, "entity 2 unmuted by subscription 1, muted by 3"},
		{"request of no resource", func(tr *tracer) {
			tr.rec.Observe(trace.Event{Op: trace.Request, ID: tr.ents["a"].ID(), Timer: tr.ents["a"].Kind() == waitset.Timer, Overloaded: 3})
		}, tracecheck.Model{}, "request of entity 2 names resource 0 and overloaded subscription 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTrace([]string{"t"}, []string{"a", "b"})
			tc.build(tr)
			err := tr.check(tc.model)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
