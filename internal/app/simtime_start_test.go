package app

// Tests of Start with executor.use_sim_time: the start waits for the
// clock topic, and the nodes' timers follow it.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// clockPayload is a clock topic message for t.
func clockPayload(t time.Time) string {
	return fmt.Sprintf(`{"time":%q}`, t.Format(time.RFC3339Nano))
}

// TestStartSimTime: with use_sim_time the start ignores a clock message
// that does not parse and waits for one that does; the heartbeat then
// beats once per 100 ms of clock time, with the clock's time.
func TestStartSimTime(t *testing.T) {
	t.Parallel()
	b := mqtttest.Embedded(t, broker.Config{})
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	cfg := loadConfig(t, fmt.Sprintf(`executor: { workers: 2, use_sim_time: true, clock_topic: sim/clock }
mqtt: { broker: %s, client_id: app-simtime, qos: 1, clean_session: true }
nodes:
  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 100ms } }
`, b.URL()))
	w := connectPaho(t, b.URL(), "app-simtime-watch")
	w.subscribe(t, "robot/heartbeat")
	w.publish(t, "sim/clock", "not a clock", true)

	logs := &syncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the app's log:\n%s", strings.Join(logs.lines(""), "\n"))
		}
	})
	type started struct {
		a   *App
		err error
	}
	done := make(chan started, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitBound)
		defer cancel()
		a, err := Start(ctx, cfg, slogTo(logs), Options{})
		done <- started{a, err}
	}()
	eventually(t, "the bad clock message is ignored", func() bool { return len(logs.lines("use_sim_time: ignored")) > 0 })
	require.NotEmpty(t, logs.lines("use_sim_time: waiting for the clock topic"))
	select {
	case s := <-done:
		t.Fatalf("started without a clock: %v", s.err)
	default:
	}

	// Cleared, the bad message cannot reach the app's own subscription
	// after a good one (the broker may send a retained message after a
	// live one), which would push the good one out of its queue of one.
	w.publish(t, "sim/clock", "", true)
	w.publish(t, "sim/clock", clockPayload(t0), false)
	var s started
	select {
	case s = <-done:
	case <-time.After(waitBound):
		t.Fatal("the start did not take the clock message")
	}
	require.NoError(t, s.err)
	a := s.a
	t.Cleanup(func() { _ = a.Shutdown(context.Background()) })
	eventually(t, "the app subscribed", a.client.Connected)

	for i := 1; i <= 5; i++ {
		w.publish(t, "sim/clock", clockPayload(t0.Add(time.Duration(i)*100*time.Millisecond)), false)
		beats := w.await(t, "beat "+strconv.Itoa(i), i, onTopic("robot/heartbeat"))
		var beat struct {
			Seq  int
			Time time.Time
		}
		require.NoError(t, json.Unmarshal([]byte(beats[i-1].payload), &beat))
		require.Equal(t, i, beat.Seq)
		require.Equal(t, t0.Add(time.Duration(i)*100*time.Millisecond), beat.Time.UTC(), "the clock's time")
	}
	require.NoError(t, shutdownWithin(t, a))
	require.Len(t, w.received(onTopic("robot/heartbeat")), 5, "no beat without clock messages")
}

// TestStartSimTimeNoClock: a start that waits for the clock topic ends
// with its context, with an error that says so, and releases the
// embedded broker's port.
func TestStartSimTimeNoClock(t *testing.T) {
	t.Parallel()
	addr := fmt.Sprintf("127.0.0.1:%d", mqtttest.FreePort(t))
	cfg := loadConfig(t, fmt.Sprintf(`executor: { use_sim_time: true }
mqtt: { listen: %q, client_id: app-noclock }
nodes:
  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 100ms } }
`, addr))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := Start(ctx, cfg, discardLogger(), Options{})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, `use_sim_time: no clock message on "clock"`)
	eventually(t, "the broker's port is free again", func() bool {
		l, err := net.Listen("tcp", addr)
		if err == nil {
			l.Close()
		}
		return err == nil
	})
}
