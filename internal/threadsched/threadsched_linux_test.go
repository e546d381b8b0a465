package threadsched

import (
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Lower raises the calling thread's nice value, and only that thread's.
func TestLower(t *testing.T) {
	got := make(chan [2]int)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		before, _ := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
		Lower(19)
		after, _ := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
		got <- [2]int{before, after}
	}()
	p := <-got
	// The raw getpriority returns 20 - nice.
	require.Equal(t, 19, 20-p[1], "the thread runs at nice 19 (from %d)", 20-p[0])
	self, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	require.NoError(t, err)
	require.NotEqual(t, 1, self, "the process is left as it was")
}

// RealtimePermitted answers as Realtime does on a thread of the caller's.
func TestRealtimePermitted(t *testing.T) {
	got := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		got <- Realtime()
	}()
	err := <-got
	require.Equal(t, err == nil, RealtimePermitted() == nil, "Realtime: %v", err)
	t.Logf("SCHED_FIFO allowed here: %v", err == nil)
}
