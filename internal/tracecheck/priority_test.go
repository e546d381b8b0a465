package tracecheck_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/internal/tracecheck"
)

// prioTrace is a trace of one worker with the subscriptions low (priority
// 0), u1 (priority 1) and u2 (priority 2).
func prioTrace() (*tracer, tracecheck.Model) {
	tr := newTrace(nil, []string{"low", "u1", "u2"})
	m := tracecheck.Model{Workers: 1, Streak: 2, Priority: map[uint64]int{
		tr.ents["u1"].ID(): 1, tr.ents["u2"].ID(): 2,
	}}
	return tr, m
}

// queue records names becoming ready and queued as one batch.
func (tr *tracer) queue(names ...string) {
	tr.batch++
	for _, n := range names {
		tr.step(trace.Ready, n, 0)
		tr.step(trace.Enqueue, n, 0)
	}
}

// run records the dequeue and a run of name.
func (tr *tracer) run(name string) {
	tr.step(trace.Dequeue, name, 0)
	tr.step(trace.Start, name, 0)
	tr.step(trace.Finish, name, 0)
}

func TestCheckAcceptsPriorities(t *testing.T) {
	tr, m := prioTrace()
	tr.queue("low")
	tr.queue("u1", "u2")
	tr.run("u2") // the highest, passing over low: streak 1
	tr.queue("u2")
	tr.run("u2") // streak 2
	tr.queue("u2")
	tr.run("low") // the streak's bound: the one queued longest
	tr.run("u1")  // queued longest now, though u2 is higher
	tr.run("u2")
	m.Drained = true
	require.NoError(t, tr.check(m))
}

func TestCheckFindsPriorityViolations(t *testing.T) {
	tests := []struct {
		name string
		runs func(tr *tracer)
		want string
	}{
		{"a lower priority first", func(tr *tracer) {
			tr.queue("low")
			tr.queue("u1", "u2")
			tr.run("u1")
		}, "dequeued before"},
		{"the streak past its bound", func(tr *tracer) {
			tr.queue("low")
			for range 3 {
				tr.queue("u1")
				tr.run("u1")
			}
		}, "3 subscription dequeues in a row passed over the one queued longest; bound 2"},
		{"a batch over a batch", func(tr *tracer) {
			tr.queue("low")
			tr.queue("u1", "low")
		}, "formed while 1 entities were queued"},
		{"an urgent one not queued", func(tr *tracer) {
			tr.run("u1")
		}, "dequeued but not queued"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, m := prioTrace()
			tt.runs(tr)
			require.ErrorContains(t, tr.check(m), tt.want)
		})
	}
}
