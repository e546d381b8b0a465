package mqtttest_test

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtttest"
)

// A broker started from a goroutine that then exits locked to its thread
// (as the executor's pinned workers do, which ends the thread) keeps
// running: Linux sends the parent-death signal when the thread that
// started a child ends, not the process.
func TestBrokerOutlivesItsStartingThread(t *testing.T) {
	if _, ok := mqtttest.MosquittoPath(); !ok {
		mqtttest.MissingMosquitto(t)
	}
	started := make(chan *mqtttest.MosquittoBroker, 1)
	errs := make(chan error, 1)
	dir := t.TempDir()
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		m, err := mqtttest.StartMosquitto(dir, mqtttest.MosquittoOptions{})
		errs <- err
		started <- m
	}()
	require.NoError(t, <-errs)
	m := <-started
	defer m.Stop()
	pid := m.PID()
	require.NotZero(t, pid)
	// The starting thread has ended or ends now; a SIGKILL would follow
	// at once.
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		require.NoError(t, syscall.Kill(pid, 0), "mosquitto was killed with the thread that started it")
		require.NoError(t, mqtttest.WaitDial(m.Addr(), time.Second))
		time.Sleep(50 * time.Millisecond)
	}
}
