package main

// The custom binary's main runs robotexec run as a user would, on a config
// with the example node types, for the whole test binary: robotexec run
// returns only on SIGINT or SIGTERM, and then main exits the process
// (robotexec.Main calls os.Exit). So the test starts main in a goroutine
// and checks what its nodes publish over the embedded broker; TestMain,
// once the tests have passed and the coverage is written, sends the
// process SIGTERM, and main's clean stop, exit status 0, ends the test
// binary. A stop that fails exits with robotexec's status 1 and its error
// on stderr, failing the package.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
)

// stopWithin bounds main's clean stop after SIGTERM.
const stopWithin = 20 * time.Second

var (
	startMain sync.Once
	brokerURL string // the embedded broker of the config main runs
	listeners atomic.Int32
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code != 0 || brokerURL == "" {
		os.Exit(code)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		fmt.Fprintln(os.Stderr, "custom: SIGTERM:", err)
		os.Exit(1)
	}
	time.Sleep(stopWithin) // main exits the process before this ends
	fmt.Fprintf(os.Stderr, "custom: robotexec run did not stop within %v of SIGTERM\n", stopWithin)
	os.Exit(1)
}

const config = `
executor: { workers: 2, overflow: block }
mqtt: { listen: "127.0.0.1:%d", client_id: custom-test-%d }
nodes:
  - { name: imu0, type: sim_imu, params: { topic: sensors/imu0/raw, rate: 100 } }
  - { name: imu_filter, type: imu_filter, params: { input: sensors/imu0/raw, output: robot/imu0/filtered, period: 20ms } }
  - { name: source, type: heartbeat, params: { topic: pipeline/0, period: 5ms } }
  - { name: stage1, type: stage, params: { input: pipeline/0, output: pipeline/1 } }
  - { name: sink, type: sink, params: { input: pipeline/1 } }
`

// runMain starts main once, on a config in a temporary directory, and
// returns the URL of its embedded broker once it accepts connections.
func runMain(t *testing.T) string {
	startMain.Do(func() {
		port := mqtttest.FreePort(t)
		path := filepath.Join(t.TempDir(), "custom.yaml")
		require.NoError(t, os.WriteFile(path, fmt.Appendf(nil, config, port, os.Getpid()), 0o644))
		os.Args = []string{"custom", "run", "-log-level", "error", path}
		go main()
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		require.NoError(t, mqtttest.WaitDial(addr, 15*time.Second))
		brokerURL = "tcp://" + addr
	})
	require.NotEmpty(t, brokerURL, "main did not start")
	return brokerURL
}

// The binary runs the imported node types: the simulated IMU feeds the
// filter, whose average comes out on the broker, and the heartbeat passes
// through a pipeline stage.
func TestMainRunsTheImportedNodeTypes(t *testing.T) {
	got := listen(t, runMain(t), "robot/imu0/filtered", "pipeline/1")
	seen := map[string]int{}
	deadline := time.After(15 * time.Second)
	for seen["robot/imu0/filtered"] < 3 || seen["pipeline/1"] < 3 {
		select {
		case m := <-got:
			seen[m.Topic]++
			if m.Topic == "robot/imu0/filtered" {
				require.Contains(t, string(m.Payload), `"samples":`)
			} else {
				require.Contains(t, string(m.Payload), `"node":"source"`)
			}
		case <-deadline:
			t.Fatalf("within 15s got %v, want 3 messages of each topic", seen)
		}
	}
}

// listen subscribes a client of the broker at url to filters; the
// messages arrive on the channel.
func listen(t *testing.T, url string, filters ...string) <-chan subscribers.Message {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := mqtt.Dial(mqtt.Config{Broker: url, ClientID: fmt.Sprintf("custom-test-listener-%d-%d", os.Getpid(), listeners.Add(1)),
		QoS: 1, CleanSession: true, StatusTopic: "-", Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	require.NoError(t, c.WaitConnected(ctx))

	ex := executor.New(executor.Options{Workers: 1, Logger: quiet})
	ch := make(chan subscribers.Message, 1000)
	for _, f := range filters {
		_, err := ex.NewOwner("listener", nil).Subscribe(c, f, func(ctx context.Context, m subscribers.Message) { ch <- m }, executor.Depth(1000))
		require.NoError(t, err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ex.Run(runCtx); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	return ch
}
