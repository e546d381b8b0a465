package timerq_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/waitset"
)

// onceSim is a simulated clock with a lead whose alarms can be rung by
// hand; an alarm rings once a setting, as a timerfd does: a ring that
// comes early uses the setting up.
type onceSim struct {
	leadSim
	alarm timerq.Alarm
	ring  func()
}

func (c *onceSim) NewAlarm(f func()) timerq.Alarm {
	c.alarm, c.ring = c.Sim.NewAlarm(f), f
	return c.alarm
}

// ringNow rings the alarm now, whatever it is set for.
func (c *onceSim) ringNow() {
	c.alarm.Stop()
	c.ring()
}

// TestEarlyRingRearms: an alarm that rings well before the early ring of
// the next deadline (as the precise alarm did when the process was
// preempted between the two clock reads it paired) leaves the alarm set
// for that deadline again; the queue used to take it for a stale ring and
// leave nothing set, and its timers stopped for good.
func TestEarlyRingRearms(t *testing.T) {
	start := time.Unix(0, 0)
	clk := &onceSim{leadSim: leadSim{timerq.NewSim(start)}}
	q := timerq.NewQueue(clk, waitset.New(nil, nil))
	defer q.Stop()
	q.Fast().SetEarly(func(time.Time, int) {})
	tm, err := q.NewTimer(10*time.Millisecond, false)
	require.NoError(t, err)
	tm.Reset()
	first := start.Add(10 * time.Millisecond)
	next, ok := clk.Next()
	require.True(t, ok)
	require.Equal(t, first.Add(-lead), next)

	clk.AdvanceTo(start.Add(5 * time.Millisecond))
	clk.ringNow() // 5 ms early
	next, ok = clk.Next()
	require.True(t, ok, "nothing set after an early ring")
	require.Equal(t, first.Add(-lead), next, "the early ring of the deadline")
}
