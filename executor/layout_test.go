package executor

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// The hot structures keep to whole cache lines (see Executor and worker):
// a field added without adjusting the padding fails here, not silently in
// the benchmarks.
func TestCacheLineLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the layout is for 64-bit platforms")
	}
	var e Executor
	require.Zero(t, unsafe.Offsetof(e.mu)%cacheLine, "the run queue starts a cache line")
	require.Less(t, unsafe.Offsetof(e.live), unsafe.Offsetof(e.mu)+cacheLine*2, "the run queue fits two lines")
	require.GreaterOrEqual(t, unsafe.Offsetof(e.regMu), unsafe.Offsetof(e.mu)+cacheLine*2, "the cold fields start past it")
	require.Greater(t, unsafe.Offsetof(e.mu), unsafe.Offsetof(e.busyUntil), "the read-mostly fields come first")
	require.GreaterOrEqual(t, unsafe.Offsetof(e.timersWaiting), unsafe.Offsetof(e.live)+cacheLine, "the waiting timers' count is past the run queue")
	require.GreaterOrEqual(t, unsafe.Offsetof(e.laneTimers), unsafe.Offsetof(e.timersWaiting)+cacheLine, "and alone on its line")
	require.Zero(t, unsafe.Sizeof(e)%cacheLine, "an executor is whole cache lines")
	require.Equal(t, uintptr(256), unsafe.Sizeof(worker{}), "a worker is 256 bytes, a size class of whole lines")
}
