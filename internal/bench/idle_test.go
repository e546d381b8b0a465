package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/app"
)

// TestIdleConfig: the idle workload's config passes robotexec validate's
// checks, every node built in a dry run.
func TestIdleConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idle.yaml")
	require.NoError(t, os.WriteFile(path, idleConfig(2, IdleBridges, IdleBeats), 0o600))
	cfg, err := app.LoadAndCheck(path)
	require.NoError(t, err)
	require.Len(t, cfg.Nodes, IdleBridges+IdleBeats)
	require.Equal(t, "embedded", cfg.MQTT.Broker)
	require.Equal(t, "127.0.0.1:0", cfg.MQTT.Listen, "a free port, which the broker picks")
	require.Equal(t, 2, cfg.Executor.Workers)
	types := map[string]int{}
	for _, n := range cfg.Nodes {
		types[n.Type]++
	}
	require.Equal(t, map[string]int{"bridge": IdleBridges, "heartbeat": IdleBeats}, types)
}

// TestIdleWithoutExecutable: without the executable the row is not
// measured, which is not a failure.
func TestIdleWithoutExecutable(t *testing.T) {
	s := &suite{ctx: context.Background(), cfg: Config{Repeat: 1, Budget: time.Second}}
	ms, err := s.idle()
	require.NoError(t, err)
	require.Len(t, ms, 1)
	require.Empty(t, ms[0].Error)
	require.Equal(t, ErrNoExecutable.Error(), ms[0].NotMeasured)
}

// TestIdleWindows: the windows fit the group's share of the budget, from
// idleMinWindow to idleWindow long, at most one a repetition.
func TestIdleWindows(t *testing.T) {
	for _, c := range []struct {
		name   string
		cfg    Config
		window time.Duration
		n      int
	}{
		{"every group, a short budget", Config{Budget: 3 * time.Second, Repeat: 1}, idleMinWindow, 1},
		{"every group, the defaults", Config{}, idleMinWindow, 2},
		{"only idle, the defaults", Config{Only: []string{"idle"}}, idleWindow, DefaultRepeat},
		{"only idle, 3 repetitions", Config{Only: []string{"idle"}, Repeat: 3}, idleWindow, 3},
		{"only idle, 15 s", Config{Only: []string{"idle"}, Budget: 15 * time.Second, Repeat: 3}, 4750 * time.Millisecond, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := c.cfg.check()
			require.NoError(t, err)
			window, n := (&suite{cfg: cfg}).idleWindows()
			require.Equal(t, c.window, window)
			require.Equal(t, c.n, n)
		})
	}
}

// TestCPUReadingTo: the CPU time between two readings is the threads'
// sum, a new thread's whole, unless a thread ended: then the totals'.
func TestCPUReadingTo(t *testing.T) {
	ms := time.Millisecond
	before := threadsCPU{threads: map[string]time.Duration{"1": 5 * ms, "2": 7 * ms}, total: 10 * ms}
	for _, c := range []struct {
		name  string
		later threadsCPU
		want  time.Duration
	}{
		{"the same threads", threadsCPU{threads: map[string]time.Duration{"1": 6 * ms, "2": 9 * ms}, total: 20 * ms}, 3 * ms},
		{"a new thread", threadsCPU{threads: map[string]time.Duration{"1": 6 * ms, "2": 9 * ms, "3": 4 * ms}, total: 20 * ms}, 7 * ms},
		{"a thread ended", threadsCPU{threads: map[string]time.Duration{"1": 6 * ms}, total: 20 * ms}, 10 * ms},
		{"no threads", threadsCPU{total: 30 * ms}, 20 * ms},
	} {
		t.Run(c.name, func(t *testing.T) { require.Equal(t, c.want, before.to(c.later)) })
	}
}

// TestIdleRaw runs the idle baseline's role, small: it says it is ready,
// and returns nil when its context ends.
func TestIdleRaw(t *testing.T) {
	ready := newIdleMarker(idleReady)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- idleRaw(ctx, []string{"250", "3"}, ready) }()
	select {
	case <-ready.seen:
	case err := <-done:
		t.Fatalf("the role ended before it was ready: %v", err)
	}
	cancel()
	require.NoError(t, <-done)
	require.ErrorContains(t, idleRaw(context.Background(), []string{"3"}, ready), "want SUBSCRIPTIONS TICKERS")
}
