package app

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/robotexec/robotexec/internal/syncbuf"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/ratelog"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// lockedBuffer is a bytes.Buffer for concurrent use.
type lockedBuffer = syncbuf.Buffer

// The clock topic moves simulated time forward, firing the timers due on
// the way in order; a message that does not parse is logged and ignored;
// one that goes back sets the clock back, with a log line that says from
// when to when, and the timers fire again from there.
func TestSimClockFollows(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	sc := &simClock{sim: timers.NewSim(t0), log: logger, bad: ratelog.New(time.Hour), back: ratelog.New(time.Hour)}
	ex := executor.New(executor.Options{Workers: 1, Clock: sc.sim, Logger: logger})
	r := new(subscribers.Router)
	cfg := &config.Config{Executor: config.Executor{ClockTopic: "clock"}}
	require.NoError(t, sc.follow(ex, r, cfg))
	var mu sync.Mutex
	var fired []time.Time
	_, err := ex.NewOwner("n", nil).Timer(100*time.Millisecond, func(ctx context.Context, ev timers.Event) {
		mu.Lock()
		fired = append(fired, ev.Expected)
		mu.Unlock()
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ex.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	pub, err := r.Publisher("clock")
	require.NoError(t, err)
	tick := func(d time.Duration) {
		require.NoError(t, pub.Publish(ctx, []byte(`{"time":"`+t0.Add(d).Format(time.RFC3339Nano)+`"}`)))
		require.Eventually(t, func() bool { return !sc.sim.Now().Before(t0.Add(d)) }, 5*time.Second, time.Millisecond)
	}
	for d := 10 * time.Millisecond; d <= 300*time.Millisecond; d += 10 * time.Millisecond {
		tick(d)
	}
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(fired) == 3 }, 5*time.Second, time.Millisecond)

	// The subscription keeps the last message only: one at a time.
	logged := func(s string) func() bool {
		return func() bool { return bytes.Contains([]byte(logs.String()), []byte(s)) }
	}
	require.NoError(t, pub.Publish(ctx, []byte(`not json`)))
	require.Eventually(t, logged("use_sim_time: ignored"), 5*time.Second, time.Millisecond)
	require.Equal(t, t0.Add(300*time.Millisecond), sc.sim.Now(), "a bad message does not move the clock")

	require.NoError(t, pub.Publish(ctx, []byte(`{"time":"`+t0.Add(time.Millisecond).Format(time.RFC3339Nano)+`"}`)))
	require.Eventually(t, func() bool { return sc.sim.Now().Equal(t0.Add(time.Millisecond)) }, 5*time.Second, time.Millisecond, "the clock went back")
	require.Eventually(t, logged(`use_sim_time: the clock went back: timers re-armed on the new time" from=2025-06-01T12:00:00.3Z to=2025-06-01T12:00:00.001Z`),
		5*time.Second, time.Millisecond, "%s", &logs)
	for d := 10 * time.Millisecond; d <= 200*time.Millisecond; d += 10 * time.Millisecond {
		tick(d)
	}
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(fired) == 4 }, 5*time.Second, time.Millisecond, "fired %v; log:\n%s", fired, logs.String())
	mu.Lock()
	require.Equal(t, []time.Time{t0.Add(100 * time.Millisecond), t0.Add(200 * time.Millisecond), t0.Add(300 * time.Millisecond),
		t0.Add(101 * time.Millisecond)}, fired, "a period after the new time")
	mu.Unlock()
}
