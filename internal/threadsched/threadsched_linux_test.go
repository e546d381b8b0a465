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

// Pin binds the calling thread to one CPU of those Allowed, and only
// that thread: the process keeps its mask.
func TestPin(t *testing.T) {
	before, err := Allowed()
	require.NoError(t, err)
	require.NotEmpty(t, before)
	last := before[len(before)-1]
	type result struct {
		pin, allowed error
		cpus         []int
	}
	got := make(chan result)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		var r result
		r.pin = Pin(last)
		r.cpus, r.allowed = Allowed()
		got <- r
	}()
	r := <-got
	require.NoError(t, r.pin)
	require.NoError(t, r.allowed)
	require.Equal(t, []int{last}, r.cpus, "the pinned thread runs on CPU %d only", last)
	runtime.LockOSThread()
	after, err := Allowed()
	runtime.UnlockOSThread()
	require.NoError(t, err)
	require.Equal(t, before, after, "the other threads keep the mask")
	require.Error(t, Pin(-1))
	require.Error(t, Pin(1<<20))
}
