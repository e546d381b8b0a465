package app

// Every goroutine an app starts is owned and waited for: none outlives
// Shutdown.

import (
	"fmt"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/config"
)

// settleWait bounds how long goroutineCount waits for the count to come
// down to a target: goroutines that have finished their work may still be
// returning.
const settleWait = 2 * time.Second

// goroutineCount returns the number of goroutines once it is at most
// target, or, after settleWait, what it is then.
func goroutineCount(target int) int {
	deadline := time.Now().Add(settleWait)
	for {
		n := runtime.NumGoroutine()
		if n <= target || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNoGoroutineOutlivesShutdown starts an app with the embedded broker,
// its client, a timer node and a relay, lets a message through, shuts it
// down, and checks that the number of goroutines is back to what it was
// before Start. Not parallel: the count is the whole process's, and
// top-level parallel tests only run after this one.
func TestNoGoroutineOutlivesShutdown(t *testing.T) {
	for _, source := range []string{config.TimerSourceGo, config.TimerSourcePrecise} {
		t.Run(source, func(t *testing.T) { checkNoGoroutineOutlives(t, source) })
	}
}

// checkNoGoroutineOutlives is TestNoGoroutineOutlivesShutdown with the
// timer source source.
func checkNoGoroutineOutlives(t *testing.T, source string) {
	id := "app-goroutines-" + source
	cfg := loadConfig(t, fmt.Sprintf(`executor: { workers: 2, timer_source: %s }
mqtt:
  listen: "127.0.0.1:0"
  client_id: %s
  qos: 1
nodes:
  - { name: beat, type: heartbeat, params: { topic: robot/beat, period: 20ms } }
  - { name: relay, type: bridge, params: { from: robot/in/#, to: robot/out/# } }
`, source, id))
	// What earlier tests left may still be ending: that only lowers the
	// count after.
	before := runtime.NumGoroutine()

	a := startApp(t, cfg, nil, Options{})
	c, err := dialPaho(t, a.broker.URL(), id+"-watch", "", "")
	require.NoError(t, err)
	c.subscribe(t, "robot/out/#")
	c.publish(t, "robot/in/x", "hello", false)
	c.await(t, "the relay's output", 1, onTopic("robot/out/x"))
	c.c.Disconnect(100)
	require.NoError(t, shutdownWithin(t, a))

	if after := goroutineCount(before); after > before {
		var dump strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&dump, 1)
		t.Fatalf("%d goroutines before Start, %d after Shutdown:\n%s", before, after, dump.String())
	}
}
