package timerq_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/waitset"
)

// leadSim is a simulated clock with a lead, as Precise has one.
type leadSim struct{ *timerq.Sim }

const lead = 100 * time.Microsecond

func (leadSim) Lead() time.Duration { return lead }

// TestEarlyRing checks SetEarly on a clock with a lead: the alarm rings a
// lead ahead of each deadline and calls the function with the deadline,
// triggering nothing; with no Poll to serve the deadline (a simulated
// clock is not polled), the alarm rings again after it, as the fallback
// (FallbackLeads leads after it), and serves it then.
func TestEarlyRing(t *testing.T) {
	start := time.Unix(0, 0)
	clk := leadSim{timerq.NewSim(start)}
	set := waitset.New(nil, nil)
	q := timerq.NewQueue(clk, set)
	defer q.Stop()
	require.Equal(t, lead, q.Fast().Lead())
	var early []time.Time
	q.Fast().SetEarly(func(d time.Time, _ int) { early = append(early, d) })
	tm, err := q.NewTimer(time.Millisecond, false)
	require.NoError(t, err)
	tm.Reset()
	first := start.Add(time.Millisecond)
	var run waitset.List

	next, ok := clk.Next()
	require.True(t, ok)
	require.Equal(t, first.Add(-lead), next, "the alarm rings a lead ahead")
	clk.AdvanceTo(next)
	require.Equal(t, []time.Time{first}, early)
	n, _ := set.Take(&run)
	require.Zero(t, n, "nothing is due yet")

	next, _ = clk.Next()
	require.Equal(t, first.Add(timerq.FallbackLeads*lead), next, "and again as the fallback after the deadline")
	clk.AdvanceTo(first)
	n, _ = set.Take(&run)
	require.Zero(t, n, "no Poll served the deadline")
	clk.AdvanceTo(next)
	n, _ = set.Take(&run)
	require.Equal(t, 1, n, "the late ring serves it")
	require.Same(t, timerq.Entity(tm), run.Pop())
	timerq.Entity(tm).Start()
	ev, ok := timerq.Call(tm)
	require.True(t, ok)
	require.Equal(t, first, ev.Expected)
	timerq.Entity(tm).Finish(false)

	// The call re-armed the timer: early again for the next deadline.
	next, _ = clk.Next()
	require.Equal(t, first.Add(time.Millisecond-lead), next)
	clk.AdvanceTo(next)
	require.Equal(t, []time.Time{first, first.Add(time.Millisecond)}, early)
}

// TestNoEarlyWithoutLead: a clock without a lead never rings early.
func TestNoEarlyWithoutLead(t *testing.T) {
	clk := timerq.NewSim(time.Unix(0, 0))
	q := timerq.NewQueue(clk, waitset.New(nil, nil))
	defer q.Stop()
	require.Zero(t, q.Fast().Lead())
	q.Fast().SetEarly(func(time.Time, int) { t.Fatal("rang early") })
	tm, err := q.NewTimer(time.Millisecond, false)
	require.NoError(t, err)
	tm.Reset()
	next, _ := clk.Next()
	require.Equal(t, time.Unix(0, 0).Add(time.Millisecond), next)
	clk.AdvanceTo(next)
}

// TestEarlyWithinLead: a deadline armed within the lead of now gets its
// early call at once, from the arming, and the alarm only as the late
// fallback FallbackLeads leads after it.
func TestEarlyWithinLead(t *testing.T) {
	start := time.Unix(0, 0)
	clk := leadSim{timerq.NewSim(start)}
	set := waitset.New(nil, nil)
	q := timerq.NewQueue(clk, set)
	defer q.Stop()
	var early []time.Time
	q.Fast().SetEarly(func(d time.Time, _ int) { early = append(early, d) })
	tm, err := q.NewTimer(lead/2, true)
	require.NoError(t, err)
	tm.Reset()
	d := start.Add(lead / 2)
	require.Equal(t, []time.Time{d}, early, "called by Reset")
	next, ok := clk.Next()
	require.True(t, ok)
	require.Equal(t, d.Add(timerq.FallbackLeads*lead), next)
	clk.AdvanceTo(next)
	var run waitset.List
	n, _ := set.Take(&run)
	require.Equal(t, 1, n)
	require.Len(t, early, 1)
}

// TestEarlyRingOfAMovedHead: the head of the heap moves later while its
// early ring is pending (a watchdog's Reset, a Cancel): the early ring,
// now too early for the new head, arms the alarm for it, so that it is
// served.
func TestEarlyRingOfAMovedHead(t *testing.T) {
	for _, move := range []string{"reset", "cancel"} {
		t.Run(move, func(t *testing.T) {
			start := time.Unix(0, 0)
			clk := leadSim{timerq.NewSim(start)}
			set := waitset.New(nil, nil)
			q := timerq.NewQueue(clk, set)
			defer q.Stop()
			q.Fast().SetEarly(func(time.Time, int) {})
			head, err := q.NewTimer(time.Millisecond, true)
			require.NoError(t, err)
			later, err := q.NewTimer(5*time.Millisecond, false)
			require.NoError(t, err)
			head.Reset() // due at 1 ms: the alarm at 0.9 ms
			later.Reset()
			clk.Advance(500 * time.Microsecond)
			want := later
			if move == "reset" {
				head.Reset() // due at 1.5 ms now
				want = head
			} else {
				head.Cancel()
			}
			clk.Advance(10 * time.Millisecond)
			var run waitset.List
			n, _ := set.Take(&run)
			require.GreaterOrEqual(t, n, 1, "served by 10.5 ms")
			require.Same(t, timerq.Entity(want), run.Pop())
		})
	}
}

// idleLeadSim is a simulated clock with a lead and an idle lead, as
// Precise has them.
type idleLeadSim struct{ leadSim }

const idleLead, idleAfter = 250 * time.Microsecond, 2 * time.Millisecond

func (idleLeadSim) IdleLead() (time.Duration, time.Duration) { return idleLead, idleAfter }

// TestIdleLead checks that a deadline armed more than the idle lead's
// threshold ahead rings the idle lead early, a nearer one the lead, and
// that both rings are taken as early rings of their deadlines.
func TestIdleLead(t *testing.T) {
	for _, c := range []struct {
		period time.Duration
		lead   time.Duration
	}{
		{time.Millisecond, lead},
		{5 * time.Millisecond, idleLead},
	} {
		start := time.Unix(0, 0)
		clk := idleLeadSim{leadSim{timerq.NewSim(start)}}
		set := waitset.New(nil, nil)
		q := timerq.NewQueue(clk, set)
		var early []time.Time
		q.Fast().SetEarly(func(d time.Time, _ int) { early = append(early, d) })
		tm, err := q.NewTimer(c.period, false)
		require.NoError(t, err)
		tm.Reset()
		first := start.Add(c.period)
		next, ok := clk.Next()
		require.True(t, ok)
		require.Equal(t, first.Add(-c.lead), next, "period %v", c.period)
		clk.AdvanceTo(next)
		require.Equal(t, []time.Time{first}, early, "period %v: the early ring", c.period)
		next, _ = clk.Next()
		require.Equal(t, first.Add(timerq.FallbackLeads*lead), next, "period %v: the late ring", c.period)
		q.Stop()
	}
}

// The early ring counts the timers that fall due at its deadline: three
// started together, then one alone.
func TestEarlyRingCountsDue(t *testing.T) {
	start := time.Unix(0, 0)
	clk := leadSim{timerq.NewSim(start)}
	q := timerq.NewQueue(clk, waitset.New(nil, nil))
	defer q.Stop()
	type ring struct {
		at  time.Time
		due int
	}
	var rings []ring
	q.Fast().SetEarly(func(d time.Time, due int) { rings = append(rings, ring{d, due}) })
	for range 3 {
		tm, err := q.NewTimer(time.Millisecond, false)
		require.NoError(t, err)
		tm.Reset()
	}
	lone, err := q.NewTimer(5*time.Millisecond, false)
	require.NoError(t, err)
	lone.Reset()
	next, _ := clk.Next()
	clk.AdvanceTo(next)
	require.Equal(t, []ring{{start.Add(time.Millisecond), 3}}, rings, "three timers due at the first deadline")
	for i := 0; i < 10 && len(rings) < 2; i++ { // the late ring serves the three; then the lone one's early ring
		next, _ = clk.Next()
		clk.AdvanceTo(next)
	}
	require.Equal(t, ring{start.Add(5 * time.Millisecond), 1}, rings[1], "one timer at the next")
}
