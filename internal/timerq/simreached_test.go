package timerq_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/timerq"
)

// TestSimFireReached: an alarm set for a time the clock has reached waits
// for the next advance, unless FireReached was called: it then fires on a
// goroutine of its own, at the clock's time, once; one set for a later
// time still waits for it.
func TestSimFireReached(t *testing.T) {
	sim := timerq.NewSim(epoch)
	sim.Advance(10 * ms)
	rang := make(chan time.Time, 4)
	a := sim.NewAlarm(func() { rang <- sim.Now() })
	a.Set(at(5 * ms))
	select {
	case <-rang:
		t.Fatal("fired before FireReached, without an advance")
	case <-time.After(20 * time.Millisecond):
	}
	sim.Advance(0)
	require.Equal(t, at(10*ms), <-rang, "the advance fires it")

	sim.FireReached()
	a.Set(at(10 * ms))
	require.Equal(t, at(10*ms), <-rang, "set for now: fires without an advance")
	a.Set(at(50 * ms))
	select {
	case <-rang:
		t.Fatal("fired before its time")
	case <-time.After(20 * time.Millisecond):
	}
	sim.Advance(40 * ms)
	require.Equal(t, at(50*ms), <-rang)
	require.Empty(t, rang, "once")
}

// TestSimFireReachedDuringAdvance: with FireReached, an alarm set while
// an advance is under way, for a time the advance reaches, fires on the
// advancing goroutine, in deadline order, as without it.
func TestSimFireReachedDuringAdvance(t *testing.T) {
	sim := timerq.NewSim(epoch)
	sim.FireReached()
	var mu sync.Mutex
	var got []ring
	record := func(name string) func() {
		return func() {
			mu.Lock()
			got = append(got, ring{name, sim.Now().Sub(epoch)})
			mu.Unlock()
		}
	}
	b := sim.NewAlarm(record("b"))
	a := sim.NewAlarm(func() {
		record("a")()
		b.Set(at(20 * ms)) // ahead of the advance's end
	})
	a.Set(at(10 * ms))
	sim.Advance(30 * ms)
	require.Equal(t, []ring{{"a", 10 * ms}, {"b", 20 * ms}}, got)
}
