package timerq_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/timerq"
)

// ring is one alarm call recorded by the Sim tests: which alarm, and what
// the clock read when it ran.
type ring struct {
	name string
	at   time.Duration
}

func TestSimNowAndAdvance(t *testing.T) {
	sim := timerq.NewSim(epoch)
	require.Equal(t, epoch, sim.Now())
	sim.Advance(3 * ms)
	require.Equal(t, at(3*ms), sim.Now())
	sim.Advance(0)
	require.Equal(t, at(3*ms), sim.Now())
	sim.AdvanceTo(at(time.Second))
	require.Equal(t, at(time.Second), sim.Now())
	sim.AdvanceTo(at(ms))
	require.Equal(t, at(time.Second), sim.Now(), "AdvanceTo never goes back")
	sim.Advance(-time.Second)
	require.Equal(t, at(time.Second), sim.Now(), "nor does a negative Advance")
	_, ok := sim.Next()
	require.False(t, ok)
}

func TestSimAlarms(t *testing.T) {
	tests := []struct {
		name string
		// run sets alarms (made by mk) and advances the clock.
		run      func(sim *timerq.Sim, mk func(name string, then func()) timerq.Alarm)
		want     []ring
		wantNow  time.Duration
		wantNext time.Duration // -1: no alarm left
	}{
		{
			name: "fire in deadline order, each at its own time",
			run: func(sim *timerq.Sim, mk func(string, func()) timerq.Alarm) {
				mk("c", nil).Set(at(30 * ms))
				mk("a", nil).Set(at(10 * ms))
				mk("b", nil).Set(at(20 * ms))
				sim.Advance(time.Second)
			},
			want:     []ring{{"a", 10 * ms}, {"b", 20 * ms}, {"c", 30 * ms}},
			wantNow:  time.Second,
			wantNext: -1,
		},
		{
			name: "only what falls due",
			run: func(sim *timerq.Sim, mk func(string, func()) timerq.Alarm) {
				mk("a", nil).Set(at(10 * ms))
				mk("b", nil).Set(at(20 * ms))
				sim.Advance(15 * ms)
			},
			want:     []ring{{"a", 10 * ms}},
			wantNow:  15 * ms,
			wantNext: 20 * ms,
		},
		{
			name: "a deadline equal to the target fires",
			run: func(sim *timerq.Sim, mk func(string, func()) timerq.Alarm) {
				mk("a", nil).Set(at(10 * ms))
				sim.AdvanceTo(at(10 * ms))
			},
			want:     []ring{{"a", 10 * ms}},
			wantNow:  10 * ms,
			wantNext: -1,
		},
		{
			name: "alarms set by alarms fire in the same advance",
			run: func(sim *timerq.Sim, mk func(string, func()) timerq.Alarm) {
				var b, c, d timerq.Alarm
				d = mk("d", nil)
				c = mk("c", func() { d.Set(at(90 * ms)) }) // beyond the advance
				b = mk("b", func() { c.Set(at(25 * ms)) })
				mk("a", func() { b.Set(at(15 * ms)) }).Set(at(10 * ms))
				mk("e", nil).Set(at(20 * ms))
				sim.Advance(50 * ms)
			},
			want:     []ring{{"a", 10 * ms}, {"b", 15 * ms}, {"e", 20 * ms}, {"c", 25 * ms}},
			wantNow:  50 * ms,
			wantNext: 90 * ms,
		},
		{
			name: "an alarm that re-sets itself rings each time",
			run: func(sim *timerq.Sim, mk func(string, func()) timerq.Alarm) {
				var a timerq.Alarm
				a = mk("a", func() { a.Set(sim.Now().Add(10 * ms)) })
				a.Set(at(10 * ms))
				sim.Advance(35 * ms)
			},
			want:     []ring{{"a", 10 * ms}, {"a", 20 * ms}, {"a", 30 * ms}},
			wantNow:  35 * ms,
			wantNext: 40 * ms,
		},
		{
			name: "set replaces the earlier setting",
			run: func(sim *timerq.Sim, mk func(string, func()) timerq.Alarm) {
				a := mk("a", nil)
				a.Set(at(10 * ms))
				a.Set(at(30 * ms))
				sim.Advance(20 * ms)
			},
			want:     nil,
			wantNow:  20 * ms,
			wantNext: 30 * ms,
		},
		{
			name: "stop disarms",
			run: func(sim *timerq.Sim, mk func(string, func()) timerq.Alarm) {
				a := mk("a", nil)
				a.Set(at(10 * ms))
				mk("b", nil).Set(at(20 * ms))
				a.Stop()
				a.Stop()
				mk("c", nil).Stop()
				sim.Advance(time.Second)
			},
			want:     []ring{{"b", 20 * ms}},
			wantNow:  time.Second,
			wantNext: -1,
		},
		{
			name: "an alarm stopped by an earlier alarm does not ring",
			run: func(sim *timerq.Sim, mk func(string, func()) timerq.Alarm) {
				b := mk("b", nil)
				b.Set(at(20 * ms))
				mk("a", func() { b.Stop() }).Set(at(10 * ms))
				sim.Advance(time.Second)
			},
			want:     []ring{{"a", 10 * ms}},
			wantNow:  time.Second,
			wantNext: -1,
		},
		{
			name: "a time in the past fires at the next advance without moving the clock back",
			run: func(sim *timerq.Sim, mk func(string, func()) timerq.Alarm) {
				sim.Advance(50 * ms)
				mk("a", nil).Set(at(10 * ms))
				sim.Advance(0)
			},
			want:     []ring{{"a", 50 * ms}},
			wantNow:  50 * ms,
			wantNext: -1,
		},
		{
			name: "an alarm rings once per setting",
			run: func(sim *timerq.Sim, mk func(string, func()) timerq.Alarm) {
				a := mk("a", nil)
				a.Set(at(10 * ms))
				sim.Advance(20 * ms)
				sim.Advance(20 * ms)
				a.Set(at(50 * ms))
				sim.Advance(20 * ms)
			},
			want:     []ring{{"a", 10 * ms}, {"a", 50 * ms}},
			wantNow:  60 * ms,
			wantNext: -1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim := timerq.NewSim(epoch)
			var got []ring
			mk := func(name string, then func()) timerq.Alarm {
				return sim.NewAlarm(func() {
					got = append(got, ring{name, sim.Now().Sub(epoch)})
					if then != nil {
						then()
					}
				})
			}
			tt.run(sim, mk)
			require.Equal(t, tt.want, got)
			require.Equal(t, at(tt.wantNow), sim.Now())
			next, ok := sim.Next()
			if tt.wantNext < 0 {
				require.False(t, ok, "no alarm left, got %v", next)
				return
			}
			require.True(t, ok)
			require.Equal(t, at(tt.wantNext), next)
		})
	}
}

func TestSimNext(t *testing.T) {
	sim := timerq.NewSim(epoch)
	_, ok := sim.Next()
	require.False(t, ok)
	a := sim.NewAlarm(func() {})
	b := sim.NewAlarm(func() {})
	_, ok = sim.Next()
	require.False(t, ok, "unset alarms do not count")
	a.Set(at(30 * ms))
	b.Set(at(20 * ms))
	next, ok := sim.Next()
	require.True(t, ok)
	require.Equal(t, at(20*ms), next)
	b.Stop()
	next, _ = sim.Next()
	require.Equal(t, at(30*ms), next)
	require.Equal(t, epoch, sim.Now(), "Next does not move the clock")
}

// TestSimConcurrentUse reads and sets a Sim from several goroutines while
// one advances it. Run it with -race.
func TestSimConcurrentUse(t *testing.T) {
	sim := timerq.NewSim(epoch)
	var rings atomic.Int64
	const n = 200
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range n / 4 {
				a := sim.NewAlarm(func() { rings.Add(1) })
				a.Set(sim.Now().Add(ms))
				sim.Next()
			}
		})
	}
	for range 1000 {
		sim.Advance(ms)
	}
	wg.Wait()
	sim.Advance(time.Hour)
	require.Equal(t, int64(n), rings.Load(), "every alarm rang exactly once")
	require.Equal(t, at(1000*ms+time.Hour), sim.Now())
}
