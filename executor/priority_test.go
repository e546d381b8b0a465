package executor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// prioRig is an executor driven by the Spin methods, whose subscriptions
// record the order of their runs by name.
type prioRig struct {
	ex   *executor.Executor
	bus  *subscribers.Router
	rec  *tracecheck.Recorder
	ran  []string
	prio map[uint64]int
}

func newPrioRig() *prioRig {
	r := &prioRig{bus: new(subscribers.Router), rec: &tracecheck.Recorder{}, prio: map[uint64]int{}}
	r.ex = executor.New(executor.Options{Workers: 1, Logger: quiet(), Observer: r.rec})
	return r
}

// sub subscribes a callback named name, of its own owner, to topic name;
// prio is the priority the callback runs at, which opts give it.
func (r *prioRig) sub(t *testing.T, name string, prio int, opts ...executor.Option) {
	t.Helper()
	opts = append(opts, executor.Depth(100), executor.Overflow(subscribers.Block))
	s, err := r.ex.NewOwner(name, nil).Subscribe(r.bus, name, func(context.Context, subscribers.Message) {
		r.ran = append(r.ran, name)
	}, opts...)
	require.NoError(t, err)
	if prio > 0 {
		r.prio[s.ID()] = prio
	}
}

func (r *prioRig) publish(t *testing.T, topic string, n int) {
	t.Helper()
	p, err := r.bus.Publisher(topic)
	require.NoError(t, err)
	for range n {
		require.NoError(t, p.Publish(context.Background(), []byte("m")))
	}
}

func (r *prioRig) check(t *testing.T, streak int) error {
	t.Helper()
	return tracecheck.Check(r.rec.Steps(), tracecheck.Model{Workers: 1, Priority: r.prio, Streak: streak})
}

// Ready together, subscriptions run by priority, highest first, whatever
// the order they became ready in; a callback without a priority of its
// own runs at its group's.
func TestPriorityOrder(t *testing.T) {
	r := newPrioRig()
	urgentGroup := r.ex.NewGroup("urgent", executor.MutuallyExclusive, executor.Priority(3))
	r.sub(t, "low", 0)
	r.sub(t, "mid", 1, executor.Priority(1))
	r.sub(t, "high", 2, executor.Priority(2))
	r.sub(t, "grouped", 3, executor.InGroup(urgentGroup))
	for _, topic := range []string{"low", "mid", "high", "grouped"} {
		r.publish(t, topic, 1)
	}
	require.Equal(t, 4, r.ex.SpinAll())
	require.Equal(t, []string{"grouped", "high", "mid", "low"}, r.ran)
	require.NoError(t, r.check(t, executor.MaxStreak))
}

// An urgent subscription that is always ready does not starve one of
// priority 0: after MaxStreak runs that pass over it, it runs. Urgent
// runs queued before its own batch do not pass over it: they were
// queued first.
func TestPriorityStreakBound(t *testing.T) {
	r := newPrioRig()
	r.sub(t, "low", 0)
	r.sub(t, "h1", 1, executor.Priority(1))
	r.sub(t, "h2", 1, executor.Priority(1))
	r.publish(t, "low", 5)
	r.publish(t, "h1", 60)
	r.publish(t, "h2", 60)
	require.Equal(t, 125, r.ex.SpinAll())

	var gaps []int
	n := 0
	for _, name := range r.ran {
		if name != "low" {
			n++
			continue
		}
		gaps = append(gaps, n)
		n = 0
	}
	require.Len(t, gaps, 5, "low ran its 5 messages: %s", strings.Join(r.ran, " "))
	require.Equal(t, executor.MaxStreak, gaps[0], "the first runs of low wait for MaxStreak urgent ones")
	for _, g := range gaps[1:] {
		// The two urgent runs queued before low's next batch, then the
		// streak.
		require.Equal(t, executor.MaxStreak+2, g)
	}
	require.Equal(t, 120-executor.MaxStreak-4*(executor.MaxStreak+2), n, "the urgent ones ran the rest after")
	require.NoError(t, r.check(t, executor.MaxStreak))
	err := r.check(t, executor.MaxStreak-1)
	require.ErrorContains(t, err, "passed over the one queued longest", "the trace's streaks reach the bound")
}

// A negative priority is refused.
func TestPriorityNegative(t *testing.T) {
	r := newPrioRig()
	o := r.ex.NewOwner("node", nil)
	_, err := o.Subscribe(r.bus, "t", func(context.Context, subscribers.Message) {}, executor.Priority(-1))
	require.ErrorContains(t, err, "priority -1 is negative")
	_, err = o.Timer(time.Second, func(context.Context, timers.Event) {}, executor.Priority(-1))
	require.ErrorContains(t, err, "priority -1 is negative")
}

// A callback that publishes into a full queue of a lower priority's
// subscription is muted only if that queue blocks: one that drops when
// full drops, and the callback of the higher priority goes on. Of equal
// priorities, it is muted either way, as ever.
func TestPriorityMuteByLowerKeepLast(t *testing.T) {
	for _, tt := range []struct {
		name           string
		producer, into int
		policy         subscribers.Policy
		muted          bool
	}{
		{"into a lower drop_oldest", 1, 0, subscribers.DropOldest, false},
		{"into a lower drop_newest", 2, 1, subscribers.DropNewest, false},
		{"into a lower block", 1, 0, subscribers.Block, true},
		{"into an equal drop_oldest", 1, 1, subscribers.DropOldest, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newPrioRig()
			_, err := r.ex.NewOwner("consumer", nil).Subscribe(r.bus, "c", func(context.Context, subscribers.Message) {},
				executor.Depth(1), executor.Overflow(tt.policy), executor.Priority(tt.into))
			require.NoError(t, err)
			out, err := r.bus.Publisher("c")
			require.NoError(t, err)
			p, err := r.ex.NewOwner("producer", nil).Subscribe(r.bus, "p", func(ctx context.Context, _ subscribers.Message) {
				require.NoError(t, out.Publish(ctx, []byte("x")))
			}, executor.Priority(tt.producer))
			require.NoError(t, err)
			// The producer runs first: of a higher priority, or ready
			// first; the consumer's queue is at its depth.
			r.publish(t, "p", 1)
			r.publish(t, "c", 1)
			r.ex.SpinSome()
			mutes, first := 0, uint64(0)
			for _, s := range r.rec.Steps() {
				if s.Op == trace.Dequeue && first == 0 {
					first = s.ID
				}
				if s.Op == trace.Mute && s.ID == p.ID() {
					mutes++
				}
			}
			require.Equal(t, p.ID(), first, "the producer ran first")
			require.Equal(t, tt.muted, mutes == 1, "%d mutes", mutes)
			r.ex.SpinAll()
		})
	}
}
