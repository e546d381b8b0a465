package executor_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/waitset"
)

// batchWait bounds every wait of the batch tests.
const batchWait = 10 * time.Second

// callLog records the callbacks an executor runs, in order, and tells a
// test when it has recorded want of them.
type callLog struct {
	mu    sync.Mutex
	calls []string
	want  int
	done  chan struct{}
}

func newCallLog(want int) *callLog { return &callLog{want: want, done: make(chan struct{})} }

func (l *callLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, s)
	if len(l.calls) == l.want {
		close(l.done)
	}
}

func (l *callLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

// wait waits, at most batchWait, until want callbacks have run.
func (l *callLog) wait(t *testing.T) {
	t.Helper()
	select {
	case <-l.done:
	case <-time.After(batchWait):
		t.Fatalf("only %d of %d callbacks ran within %v: %v", len(l.get()), l.want, batchWait, l.get())
	}
}

// record returns a subscription callback that logs name plus the payload.
func (l *callLog) record(name string) func(context.Context, subscribers.Message) {
	return func(ctx context.Context, m subscribers.Message) { l.add(name + string(m.Payload)) }
}

// deliver queues n messages, payloads "1" to "n", on s.
func deliver(t *testing.T, s *subscribers.Subscription, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		require.True(t, s.Deliver(subscribers.Message{Topic: "t", Payload: fmt.Appendf(nil, "%d", i)}))
	}
}

// subRuns returns, for each subscription of the trace, the number of
// messages each of its runs served (Start, then a Next per further message,
// up to Finish), in the order of the runs.
func subRuns(steps []tracecheck.Step) map[uint64][]int {
	runs := map[uint64][]int{}
	cur := map[uint64]int{}
	for _, s := range steps {
		if s.Kind != waitset.Subscription {
			continue
		}
		switch s.Op {
		case trace.Start, trace.Next:
			if s.Seq != 0 {
				cur[s.ID]++
			}
		case trace.Finish:
			runs[s.ID] = append(runs[s.ID], cur[s.ID])
			delete(cur, s.ID)
		}
	}
	return runs
}

// countOps counts the steps of op, of entity id (or of every entity if id
// is 0).
func countOps(steps []tracecheck.Step, op trace.Op, id uint64) int {
	n := 0
	for _, s := range steps {
		if s.Op == op && (id == 0 || s.ID == id) {
			n++
		}
	}
	return n
}

// twoQueuedSubscriptions runs, on one worker with the given batch, two
// subscriptions A and B with msgs messages each, queued before Run, and
// returns the callbacks' order, the trace and the executor's run count.
func twoQueuedSubscriptions(t *testing.T, batch, msgs int) (order []string, steps []tracecheck.Step, runs uint64) {
	t.Helper()
	rec := &tracecheck.Recorder{}
	ex := executor.New(executor.Options{
		Workers: 1, Batch: batch, BatchBudget: time.Hour, Logger: quiet(),
		Observer: rec,
	})
	o := ex.NewOwner("n", ex.NewGroup("r", executor.Reentrant))
	bus := new(subscribers.Router)
	log := newCallLog(2 * msgs)
	a, err := o.Subscribe(bus, "a", log.record("A"), executor.Depth(64), executor.Overflow(subscribers.Block))
	require.NoError(t, err)
	b, err := o.Subscribe(bus, "b", log.record("B"), executor.Depth(64), executor.Overflow(subscribers.Block))
	require.NoError(t, err)
	deliver(t, a, msgs)
	deliver(t, b, msgs)
	stop := run(t, ex)
	log.wait(t)
	stop()
	return log.get(), rec.Steps(), ex.Stats().Runs
}

// TestBatchServesMessagesBackToBack checks that with Batch 4 one worker
// serves two busy subscriptions in runs of exactly 4 messages each,
// alternating between them in readiness order, each in message order, and
// that the trace shows the batches as Next steps and passes the checker.
func TestBatchServesMessagesBackToBack(t *testing.T) {
	const batch, msgs = 4, 12
	order, steps, runs := twoQueuedSubscriptions(t, batch, msgs)

	var want []string
	for r := 0; r < msgs/batch; r++ {
		for _, name := range []string{"A", "B"} {
			for i := 1; i <= batch; i++ {
				want = append(want, fmt.Sprintf("%s%d", name, r*batch+i))
			}
		}
	}
	require.Equal(t, want, order, "runs of %d messages, alternating A and B", batch)

	nruns := 2 * msgs / batch
	require.Equal(t, 2*msgs-nruns, countOps(steps, trace.Next, 0), "a Next step per message after a run's first")
	require.Equal(t, nruns, countOps(steps, trace.Start, 0), "a Start step per run")
	for id, rs := range subRuns(steps) {
		require.Equal(t, []int{4, 4, 4}, rs, "runs of subscription %d", id)
	}
	require.NoError(t, tracecheck.Check(steps, tracecheck.Model{Workers: 1, Drained: true, Batch: batch}))
	require.Equal(t, uint64(2*msgs), runs, "Stats counts each message of a batch")
}

// TestBatchOfOneServesOneMessage checks that with Batch 1 each run serves
// one message: two busy subscriptions strictly alternate, with no Next step.
func TestBatchOfOneServesOneMessage(t *testing.T) {
	const msgs = 12
	order, steps, runs := twoQueuedSubscriptions(t, 1, msgs)

	var want []string
	for i := 1; i <= msgs; i++ {
		want = append(want, fmt.Sprintf("A%d", i), fmt.Sprintf("B%d", i))
	}
	require.Equal(t, want, order)
	require.Zero(t, countOps(steps, trace.Next, 0), "no run goes on to a next message")
	require.Equal(t, 2*msgs, countOps(steps, trace.Start, 0))
	require.NoError(t, tracecheck.Check(steps, tracecheck.Model{Workers: 1, Drained: true, Batch: 1}))
	require.Equal(t, uint64(2*msgs), runs)
}

// busyWaitFor busy-waits for d on the monotonic clock.
func busyWaitFor(d time.Duration) {
	start := time.Now()
	for time.Since(start) < d {
	}
}

// TestBatchEndsAfterBudget checks that a run ends once it has lasted
// BatchBudget (the default, 10µs): with callbacks that each take at least
// 6µs, the second callback of a run ends at least 12µs after the run began,
// so no run serves more than 2 messages, however slow the machine (a slow
// machine only lengthens the callbacks).
func TestBatchEndsAfterBudget(t *testing.T) {
	const msgs, work = 16, 6 * time.Microsecond
	require.Greater(t, 2*work, executor.DefaultBatchBudget)
	rec := &tracecheck.Recorder{}
	ex := executor.New(executor.Options{Workers: 1, Logger: quiet(), Observer: rec})
	o := ex.NewOwner("n", nil)
	bus := new(subscribers.Router)
	log := newCallLog(msgs)
	s, err := o.Subscribe(bus, "slow", func(ctx context.Context, m subscribers.Message) {
		busyWaitFor(work)
		log.add(string(m.Payload))
	}, executor.Depth(64))
	require.NoError(t, err)
	deliver(t, s, msgs)
	stop := run(t, ex)
	log.wait(t)
	stop()

	steps := rec.Steps()
	rs := subRuns(steps)[s.ID()]
	total, pairs := 0, 0
	for i, n := range rs {
		require.LessOrEqual(t, n, 2, "run %d of %v lasted past the budget", i, rs)
		total += n
		if n == 2 {
			pairs++
		}
	}
	require.Equal(t, msgs, total, "runs %v", rs)
	t.Logf("runs: %v (%d of 2 messages)", rs, pairs)
	require.NoError(t, tracecheck.Check(steps, tracecheck.Model{Workers: 1, Drained: true, Batch: executor.DefaultBatch}))
}

// TestSpinOnceRunsOneMessage checks that the Spin methods serve one
// message per run whatever Options.Batch: SpinOnce runs one callback of a
// subscription with 3 queued messages, SpinSome one more, SpinAll the last,
// and the trace has no Next step.
func TestSpinOnceRunsOneMessage(t *testing.T) {
	rec := &tracecheck.Recorder{}
	ex := executor.New(executor.Options{Batch: 8, BatchBudget: time.Hour, Logger: quiet(), Observer: rec})
	o := ex.NewOwner("n", nil)
	bus := new(subscribers.Router)
	log := newCallLog(3)
	s, err := o.Subscribe(bus, "x", log.record("x"))
	require.NoError(t, err)
	deliver(t, s, 3)

	ctx, cancel := context.WithTimeout(context.Background(), batchWait)
	defer cancel()
	require.NoError(t, ex.SpinOnce(ctx))
	require.Equal(t, []string{"x1"}, log.get(), "SpinOnce runs one callback")
	require.Equal(t, 2, s.Len())
	require.Equal(t, uint64(1), ex.Stats().Runs)

	require.Equal(t, 1, ex.SpinSome(), "SpinSome runs the subscription once, one message")
	require.Equal(t, []string{"x1", "x2"}, log.get())
	require.Equal(t, 1, ex.SpinAll())
	require.Equal(t, []string{"x1", "x2", "x3"}, log.get())
	require.Equal(t, uint64(3), ex.Stats().Runs)

	steps := rec.Steps()
	require.Zero(t, countOps(steps, trace.Next, 0))
	require.NoError(t, tracecheck.Check(steps, tracecheck.Model{Workers: 1, Drained: true, Batch: 8}))
}

// TestBatchNeedsServeOne checks that the runs of a callback that needs a
// resource serve one message each, while a subscription whose callback
// publishes, and a plain one, serve their messages in one batch: having a
// publisher does not end a batch, only a publication that leaves a queue
// overloaded does (TestMuteEndsTheBatch).
func TestBatchNeedsServeOne(t *testing.T) {
	const msgs = 6
	rec := &tracecheck.Recorder{}
	ex := executor.New(executor.Options{
		Workers: 1, Batch: 8, BatchBudget: time.Hour, Logger: quiet(),
		Observer: rec,
	})
	bus := new(subscribers.Router)
	log := newCallLog(3 * msgs)

	needy := ex.NewOwner("needy", nil)
	r, err := needy.Subscribe(bus, "r", log.record("R"), executor.Depth(64), executor.Needs("r"))
	require.NoError(t, err)
	out, err := bus.Publisher("other")
	require.NoError(t, err)
	record := log.record("P")
	p, err := ex.NewOwner("publishing", nil).Subscribe(bus, "p", func(ctx context.Context, m subscribers.Message) {
		record(ctx, m)
		assert.NoError(t, out.Publish(ctx, m.Payload))
	}, executor.Depth(64))
	require.NoError(t, err)
	plain := ex.NewOwner("plain", nil)
	c, err := plain.Subscribe(bus, "c", log.record("C"), executor.Depth(64))
	require.NoError(t, err)
	deliver(t, r, msgs)
	deliver(t, p, msgs)
	deliver(t, c, msgs)
	stop := run(t, ex)
	log.wait(t)
	stop()

	want := []string{"R1"}
	for _, name := range []string{"P", "C", "R"} {
		from := 1
		if name == "R" {
			from = 2
		}
		for i := from; i <= msgs; i++ {
			want = append(want, fmt.Sprintf("%s%d", name, i))
		}
	}
	require.Equal(t, want, log.get())

	steps := rec.Steps()
	runs := subRuns(steps)
	require.Equal(t, []int{1, 1, 1, 1, 1, 1}, runs[r.ID()], "the resource's callback serves one message a run")
	require.Equal(t, []int{msgs}, runs[p.ID()], "the publishing callback batches")
	require.Equal(t, []int{msgs}, runs[c.ID()], "the plain callback batches")
	require.Zero(t, countOps(steps, trace.Next, r.ID()))
	require.Equal(t, msgs-1, countOps(steps, trace.Next, p.ID()))
	require.Equal(t, msgs-1, countOps(steps, trace.Next, c.ID()))
	require.NoError(t, tracecheck.Check(steps, tracecheck.Model{Workers: 1, Drained: true, Batch: 8}))
	require.Equal(t, uint64(3*msgs), ex.Stats().Runs)
}
