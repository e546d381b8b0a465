package timerq

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/waitset"
)

// slowAlarmClock is the system clock with an alarm that never rings and
// takes 20 µs to set or stop, as a timerfd's system call does on a VM, and
// records its settings.
type slowAlarmClock struct {
	System
	a *slowAlarm
}

type slowAlarm struct {
	mu    sync.Mutex
	busy  bool // a setting is being made
	made  int
	last  alarmWant
	clash bool // two settings were made at once
}

func (c slowAlarmClock) NewAlarm(func()) Alarm { return c.a }

func (a *slowAlarm) make(w alarmWant) {
	a.mu.Lock()
	if a.busy {
		a.clash = true
	}
	a.busy = true
	a.mu.Unlock()
	for start := time.Now(); time.Since(start) < 20*time.Microsecond; {
	}
	a.mu.Lock()
	a.busy = false
	a.made++
	a.last = w
	a.mu.Unlock()
}

func (a *slowAlarm) Set(t time.Time) { a.make(alarmWant{at: t}) }
func (a *slowAlarm) Stop()           { a.make(alarmWant{stop: true}) }

// The alarm's settings are made outside the queue's lock (alarm.go), one
// at a time, and the last made is the last wanted: 4 goroutines reset
// timers at random to ever earlier deadlines, each reset arming, or cancel
// them, while each setting takes 20 µs; then the alarm's last setting is
// the queue's. Fewer settings are made than wanted where they overlap.
func TestAlarmSettingsOutsideTheLock(t *testing.T) {
	a := &slowAlarm{}
	q := NewQueue(slowAlarmClock{a: a}, waitset.New(nil, nil))
	defer q.Stop()
	// Each deadline earlier than the ones before: each arms.
	far := time.Now().Add(time.Hour)
	var step atomic.Int64
	var wg sync.WaitGroup
	for g := range 4 {
		var tms []*Timer
		for range 8 {
			tm, err := q.NewTimer(time.Hour, true)
			require.NoError(t, err)
			tms = append(tms, tm)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 400 {
				tm := tms[rng.IntN(len(tms))]
				if rng.IntN(4) == 0 {
					tm.Cancel()
				} else {
					tm.ResetAt(far.Add(-time.Duration(step.Add(1)) * time.Microsecond))
				}
			}
		}()
	}
	wg.Wait()
	q.mu.Lock()
	want, wanted := q.alarmState.want, q.alarmState.gen.Load()
	q.mu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	t.Logf("%d settings wanted, %d made", wanted, a.made)
	require.False(t, a.clash, "two settings made at once")
	require.Equal(t, want, a.last, "the last setting made is the last wanted")
	require.LessOrEqual(t, uint64(a.made), wanted)
}

// gateAlarmClock is the system clock with an alarm that never rings and
// records its settings; a setting made while gate is set waits for it to
// be closed.
type gateAlarmClock struct {
	System
	a *gateAlarm
}

type gateAlarm struct {
	mu      sync.Mutex
	gate    chan struct{} // closed to let the setting under way finish
	entered chan struct{} // closed when a setting waits at gate
	last    time.Time
}

func (c gateAlarmClock) NewAlarm(func()) Alarm { return c.a }

func (a *gateAlarm) Set(t time.Time) {
	a.mu.Lock()
	gate := a.gate
	a.gate = nil
	a.mu.Unlock()
	if gate != nil {
		close(a.entered)
		<-gate
	}
	a.mu.Lock()
	a.last = t
	a.mu.Unlock()
}

func (a *gateAlarm) Stop() {}

// A setting wanted while another is being made is made by the goroutine
// making that one, after it: the goroutine that wanted it does not wait.
func TestAlarmSettingWantedDuringAnother(t *testing.T) {
	gate := make(chan struct{})
	a := &gateAlarm{gate: gate, entered: make(chan struct{})}
	q := NewQueue(gateAlarmClock{a: a}, waitset.New(nil, nil))
	defer q.Stop()
	first, err := q.NewTimer(time.Hour, true)
	require.NoError(t, err)
	second, err := q.NewTimer(time.Hour, true)
	require.NoError(t, err)
	far := time.Now().Add(time.Hour)
	done := make(chan struct{})
	go func() {
		defer close(done)
		first.ResetAt(far) // its setting waits at the gate
	}()
	<-a.entered
	second.ResetAt(far.Add(-time.Minute)) // earlier: it arms too
	a.mu.Lock()
	require.True(t, a.last.IsZero(), "the second's setting waits for the first's")
	a.mu.Unlock()
	close(gate)
	<-done
	a.mu.Lock()
	defer a.mu.Unlock()
	require.Equal(t, far.Add(-time.Minute), a.last, "the second's setting made after the first's")
}
