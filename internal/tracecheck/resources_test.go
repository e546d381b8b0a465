package tracecheck_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/waitset"
)

// res records a resource step of entity name on resource r.
func (tr *tracer) res(op trace.Op, name string, r uint64) {
	tr.rec.Observe(trace.Event{Op: op, ID: tr.ents[name].ID(), Timer: tr.ents[name].Kind() == waitset.Timer, Resource: r, Worker: tr.worker})
}

// mute records a Mute or Unmute of entity name by subscription by.
func (tr *tracer) mute(op trace.Op, name string, by uint64) {
	tr.rec.Observe(trace.Event{Op: op, ID: tr.ents[name].ID(), Timer: tr.ents[name].Kind() == waitset.Timer, Overloaded: by})
}

// runHolding records a well-formed run of entity name in a batch of its
// own that needs resources rs, requested in the order given.
func (tr *tracer) runHolding(name string, rs ...uint64) {
	tr.batch++
	tr.step(trace.Ready, name, 0)
	tr.step(trace.Enqueue, name, 0)
	tr.step(trace.Dequeue, name, 0)
	for _, r := range rs {
		tr.res(trace.Request, name, r)
		tr.res(trace.Acquire, name, r)
	}
	tr.step(trace.Start, name, 0)
	for _, r := range rs {
		tr.res(trace.Release, name, r)
	}
	tr.step(trace.Finish, name, 0)
}

// Runs that take their resources in ascending order, hold them while
// they run and release them before they finish pass; so does an entity
// muted by an overloaded subscription and unmuted before it runs again,
// and a group whose members run one after the other.
func TestCheckAcceptsResourcesMutingAndGroups(t *testing.T) {
	tr := newTrace([]string{"t"}, []string{"a", "b"})
	tr.runHolding("t", 10, 11)
	tr.runHolding("a", 11)
	tr.mute(trace.Mute, "t", 2)
	tr.runHolding("a")
	tr.mute(trace.Unmute, "t", 2)
	tr.runHolding("t", 10)
	tr.cycle("a", "b")
	g := map[uint64]string{1: "g", 2: "g", 3: "g"}
	require.NoError(t, tr.check(tracecheck.Model{Workers: 1, Drained: true, Group: g}))
}

// A request queued behind another run's is granted when that run
// releases the resource, on the other worker.
func TestCheckAcceptsQueuedAcquisitions(t *testing.T) {
	tr := newTrace(nil, []string{"a", "b"})
	tr.batch = 1
	for _, n := range []string{"a", "b"} {
		tr.step(trace.Ready, n, 0)
		tr.step(trace.Enqueue, n, 0)
	}
	tr.step(trace.Dequeue, "a", 0)
	tr.res(trace.Request, "a", 5)
	tr.res(trace.Acquire, "a", 5)
	tr.step(trace.Start, "a", 0)
	tr.worker = 1
	tr.step(trace.Dequeue, "b", 0)
	tr.res(trace.Request, "b", 5)
	tr.worker = 0
	tr.res(trace.Release, "a", 5)
	tr.step(trace.Finish, "a", 0)
	tr.worker = 1
	tr.res(trace.Acquire, "b", 5)
	tr.step(trace.Start, "b", 0)
	tr.res(trace.Release, "b", 5)
	tr.step(trace.Finish, "b", 0)
	require.NoError(t, tr.check(tracecheck.Model{Workers: 2, Drained: true}))
}

func TestCheckFindsResourceViolations(t *testing.T) {
	tests := []struct {
		name  string
		build func(tr *tracer)
		model tracecheck.Model
		want  string
	}{
		{"acquire a held resource", func(tr *tracer) {
			tr.res(trace.Request, "a", 7)
			tr.res(trace.Acquire, "a", 7)
			tr.res(trace.Request, "b", 7)
			tr.res(trace.Acquire, "b", 7)
		}, tracecheck.Model{}, "entity 3 acquires resource 7 held by entity 2"},
		{"acquire out of FIFO order", func(tr *tracer) {
			tr.res(trace.Request, "a", 7)
			tr.res(trace.Request, "b", 7)
			tr.res(trace.Acquire, "b", 7)
		}, tracecheck.Model{}, "entity 3 acquires resource 7 out of FIFO order (queue [2 3])"},
		{"acquire without a request", func(tr *tracer) {
			tr.res(trace.Acquire, "a", 7)
		}, tracecheck.Model{}, "entity 2 acquires resource 7 out of FIFO order (queue [])"},
		{"requests not ascending", func(tr *tracer) {
			tr.res(trace.Request, "a", 8)
			tr.res(trace.Acquire, "a", 8)
			tr.res(trace.Request, "a", 7)
		}, tracecheck.Model{}, "entity 2 requests resource 7 after 8: not ascending"},
		{"request before holding the one before", func(tr *tracer) {
			tr.res(trace.Request, "a", 7)
			tr.res(trace.Request, "a", 8)
		}, tracecheck.Model{}, "entity 2 requests resource 8 before holding 7"},
		{"start without every resource", func(tr *tracer) {
			tr.res(trace.Request, "a", 7)
			tr.step(trace.Start, "a", 0)
		}, tracecheck.Model{}, "entity 2 starts holding [] of its resources [7]"},
		{"release of a resource not held", func(tr *tracer) {
			tr.step(trace.Start, "a", 0)
			tr.res(trace.Release, "a", 7)
		}, tracecheck.Model{}, "entity 2 releases resource 7 it does not hold"},
		{"release while not running", func(tr *tracer) {
			tr.res(trace.Request, "a", 7)
			tr.res(trace.Acquire, "a", 7)
			tr.res(trace.Release, "a", 7)
		}, tracecheck.Model{}, "entity 2 releases resource 7 while not running"},
		{"finish holding", func(tr *tracer) {
			tr.res(trace.Request, "a", 7)
			tr.res(trace.Acquire, "a", 7)
			tr.step(trace.Start, "a", 0)
			tr.step(trace.Finish, "a", 0)
		}, tracecheck.Model{}, "entity 2 finishes still holding resources [7]"},
		{"never acquired once drained", func(tr *tracer) {
			tr.res(trace.Request, "a", 7)
		}, tracecheck.Model{Drained: true}, "resource 7: requests of entities [2] never acquired it"},
		{"still held once drained", func(tr *tracer) {
			tr.res(trace.Request, "a", 7)
			tr.res(trace.Acquire, "a", 7)
		}, tracecheck.Model{Drained: true}, "resource 7 still held by entity 2"},
		{"release naming an overloaded subscription", func(tr *tracer) {
			tr.rec.Observe(trace.Event{Op: trace.Release, ID: tr.ents["a"].ID(), Timer: tr.ents["a"].Kind() == waitset.Timer, Resource: 7, Overloaded: 3})
		}, tracecheck.Model{}, "release of entity 2 names resource 7 and overloaded subscription 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTrace([]string{"t"}, []string{"a", "b"})
			tc.build(tr)
			require.ErrorContains(t, tracecheck.Check(onlyResourceRuns(tr.rec.Steps()), tc.model), tc.want)
		})
	}
}

// onlyResourceRuns keeps the resource steps and the starts and finishes,
// so that a table case needs no scheduling steps to reach its point.
func onlyResourceRuns(steps []tracecheck.Step) []tracecheck.Step {
	var out []tracecheck.Step
	for _, s := range steps {
		switch s.Op {
		case trace.Request, trace.Acquire, trace.Release, trace.Start, trace.Finish:
			out = append(out, s)
		}
	}
	return out
}

func TestCheckFindsMutingViolations(t *testing.T) {
	tests := []struct {
		name  string
		build func(tr *tracer)
		model tracecheck.Model
		want  string
	}{
		{"muted twice", func(tr *tracer) {
			tr.mute(trace.Mute, "t", 2)
			tr.mute(trace.Mute, "t", 2)
		}, tracecheck.Model{}, "entity 1 muted again (muted at step 0)"},
		{"unmuted while not muted", func(tr *tracer) {
			tr.mute(trace.Unmute, "t", 2)
		}, tracecheck.Model{}, "entity 1 unmuted while not muted"},
		{"scheduled while muted", func(tr *tracer) {
			tr.mute(trace.Mute, "t", 2)
			tr.batch = 1
			tr.step(trace.Ready, "t", 0)
			tr.step(trace.Enqueue, "t", 0)
		}, tracecheck.Model{}, "entity 1 scheduled while muted (since step 0)"},
		{"never unmuted once drained", func(tr *tracer) {
			tr.mute(trace.Mute, "t", 2)
		}, tracecheck.Model{Drained: true}, "entity 1 muted at step 0 was never unmuted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTrace([]string{"t"}, []string{"a"})
			tc.build(tr)
			require.ErrorContains(t, tr.check(tc.model), tc.want)
		})
	}
}

// A trace with more violations than the cap reports the first ones only.
func TestCheckCapsTheReport(t *testing.T) {
	tr := newTrace(nil, []string{"a"})
	for range 50 {
		tr.mute(trace.Unmute, "a", 1)
	}
	err := tr.check(tracecheck.Model{})
	require.Error(t, err)
	require.Len(t, err.(interface{ Unwrap() []error }).Unwrap(), 20)
}
