package builtin_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/nodes/builtin"
	"github.com/robotexec/robotexec/nodes/nodetest"
)

// The built-in nodes on nodetest's simulated clock: what they do with
// each message and each deadline, exactly, without a broker.

// At max_rate 1 Hz, one of a burst passes per topic; with json, each is
// checked.
func TestBridgeMaxRateAndJSONCheck(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("bridge", "bridge", "from: in/#\nto: out/#\nmax_rate: 1\njson: true")
	// Twenty messages per topic in a burst: at 1 Hz one passes per topic.
	for i := range 20 {
		r.Publish("in/a", fmt.Sprintf(`{"i":%d}`, i))
		r.Publish("in/b/c", fmt.Sprintf(`{"i":%d}`, i))
	}
	require.Len(t, r.Published("out/#"), 2)
	require.Equal(t, []string{`{"i":0}`}, r.Published("out/a"))
	require.Equal(t, []string{`{"i":0}`}, r.Published("out/b/c"))
}

func TestBridgeDropsInvalidJSON(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("bridge", "bridge", "from: in/+\nto: out/+\njson: true")
	r.Publish("in/x", "not json")
	r.Publish("in/x", `{"ok":true}`)
	require.Len(t, r.Published("out/+"), 1)
	require.Equal(t, []string{`{"ok":true}`}, r.Published("out/x"), "payload passes through unchanged")
}

// Beats are numbered from 1 without gaps, on drift-free deadlines: beat k
// is stamped start + k periods.
func TestHeartbeatCadence(t *testing.T) {
	r := nodetest.New(t)
	start := r.Now()
	r.MustBuild("hb", "heartbeat", "topic: robot/heartbeat\nperiod: 50ms")
	for range 12 {
		r.Advance(50 * time.Millisecond)
	}
	beats := nodetest.PublishedJSON[builtin.Beat](r, "robot/heartbeat")
	require.Len(t, beats, 12)
	for i, b := range beats {
		require.Equal(t, "hb", b.Node)
		require.Equal(t, uint64(i+1), b.Seq, "no gaps")
		at, err := time.Parse(time.RFC3339Nano, b.Time)
		require.NoError(t, err)
		require.Equal(t, start.Add(time.Duration(i+1)*50*time.Millisecond), at)
	}
}

// alarms returns the watchdog's alarms so far, as "TOPIC STATE", each
// with a last_seen time.
func alarms(t *testing.T, r *nodetest.Rig, topic string) []string {
	t.Helper()
	var out []string
	for _, a := range nodetest.PublishedJSON[builtin.Alarm](r, topic) {
		_, err := time.Parse(time.RFC3339Nano, a.LastSeen)
		require.NoError(t, err)
		out = append(out, a.Topic+" "+a.State)
	}
	return out
}

// A watched topic falls stale after timeout without a message, once; its
// next message makes it ok, once; and it falls stale again.
func TestWatchdogTransitions(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("wd", "watchdog", "watch: robot/+/data\ntimeout: 200ms\nalarm: robot/alarm")
	r.Publish("robot/imu/data", "1")
	r.Publish("robot/odom/data", "1")
	r.Advance(199 * time.Millisecond)
	require.Empty(t, alarms(t, r, "robot/alarm"))

	r.Advance(time.Millisecond)
	require.ElementsMatch(t, []string{"robot/imu/data stale", "robot/odom/data stale"}, alarms(t, r, "robot/alarm"))
	r.Advance(500 * time.Millisecond)
	require.Len(t, alarms(t, r, "robot/alarm"), 2, "stale once, not again")

	r.Publish("robot/imu/data", "2")
	require.Equal(t, "robot/imu/data ok", alarms(t, r, "robot/alarm")[2])
	// And stale again after the timeout.
	r.Advance(200 * time.Millisecond)
	require.Equal(t, []string{"robot/imu/data stale"}, alarms(t, r, "robot/alarm")[3:])
}

func TestParamErrors(t *testing.T) {
	tests := []struct{ typ, params, want string }{
		{"bridge", "to: x", "from is required"},
		{"bridge", "from: x", "to is required"},
		{"bridge", "from: a/#/b\nto: x", `"a/#/b"`},
		{"bridge", "from: a\nto: b\nmax_rate: -1", "max_rate -1 is negative"},
		{"bridge", "from: a\nto: b\nqos: 3", "qos 3 is not 0, 1 or 2"},
		{"bridge", "from: a\nto: b\nrate: 3", "unknown key"},
		{"bridge", "from: robot/#\nto: robot/in/#", `to "robot/in/#" can match from "robot/#"`},
		{"bridge", "from: $share/g/+/x\nto: x/+", `to "x/+" can match from "$share/g/+/x"`},
		{"bridge", "from: a/b\nto: a/b", "forward its own output"},
		{"heartbeat", "period: 1s", "topic is required"},
		{"heartbeat", "topic: t\nperiod: -1s", "not positive"},
		{"heartbeat", "topic: t\nperiod: soon", `"soon" is not a duration`},
		{"watchdog", "alarm: a\ntimeout: 1s", "watch is required"},
		{"watchdog", "watch: a\ntimeout: 1s", "alarm is required"},
		{"watchdog", "watch: a\nalarm: b", "timeout 0s is not positive"},
		{"watchdog", "watch: a\nalarm: b\ntimeout: 1s\nmax_topics: -1", "max_topics -1 is negative"},
		{"bridge", "from: a\nto: b\nmax_topics: -5", "max_topics -5 is negative"},
	}
	r := nodetest.New(t)
	for _, tc := range tests {
		_, err := r.Build("n", tc.typ, tc.params)
		require.ErrorContains(t, err, tc.want, "%s with %q", tc.typ, tc.params)
	}
}

// A clock set back (use_sim_time, a playback that starts over) re-arms the
// watchdog's timeouts on the new time: a topic that stays silent falls
// stale a timeout after the jump, as does one first seen after it a
// timeout after its message, rather than when the clock catches up with
// the deadlines of before the jump; a stale topic stays stale until its
// next message. A small step back leaves the deadlines within a timeout
// of the new time as they were.
func TestWatchdogClockJumpBack(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("wd", "watchdog", "watch: robot/+/data\ntimeout: 200ms\nalarm: robot/alarm")
	start := r.Now()
	r.Publish("robot/a/data", "1")
	r.Advance(150 * time.Millisecond)
	r.Publish("robot/b/data", "1") // deadline start+350ms
	r.Advance(50 * time.Millisecond)
	require.Equal(t, []string{"robot/a/data stale"}, alarms(t, r, "robot/alarm"))

	back := start.Add(-10 * time.Second)
	r.Rewind(back)
	r.Advance(50 * time.Millisecond)
	r.Publish("robot/c/data", "1") // deadline back+250ms
	r.Advance(149 * time.Millisecond)
	require.Len(t, alarms(t, r, "robot/alarm"), 1, "b has 200 ms from the jump")
	r.Advance(time.Millisecond)
	require.Equal(t, []string{"robot/b/data stale"}, alarms(t, r, "robot/alarm")[1:], "at back+200ms")
	r.Advance(50 * time.Millisecond)
	require.Equal(t, []string{"robot/c/data stale"}, alarms(t, r, "robot/alarm")[2:], "at back+250ms")
	r.Publish("robot/a/data", "2")
	require.Equal(t, []string{"robot/a/data ok"}, alarms(t, r, "robot/alarm")[3:])

	// A step back of 50 ms, to back+300ms: a's deadline, back+450ms, is
	// within a timeout of the new time and stays.
	r.Advance(100 * time.Millisecond)
	r.Rewind(back.Add(300 * time.Millisecond))
	r.Advance(149 * time.Millisecond)
	require.Len(t, alarms(t, r, "robot/alarm"), 4)
	r.Advance(time.Millisecond)
	require.Equal(t, []string{"robot/a/data stale"}, alarms(t, r, "robot/alarm")[4:], "at back+450ms, as before the step")
}
