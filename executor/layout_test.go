package executor

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// The hot structures keep to whole cache lines (see Executor and worker):
// a field added to the wrong section, or padding that no longer pads, fails
// here, not silently in the benchmarks.
func TestCacheLineLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the layout is for 64-bit platforms")
	}
	var e Executor
	// Each section of an Executor — an embedded struct, or a field of its
	// own — holds its cache lines alone.
	owner := map[uintptr]string{} // line → section
	et := reflect.TypeFor[Executor]()
	for i := range et.NumField() {
		f := et.Field(i)
		if f.Name == "_" {
			continue
		}
		fields := []reflect.StructField{f}
		if f.Anonymous {
			fields = fields[:0]
			for j := range f.Type.NumField() {
				g := f.Type.Field(j)
				g.Offset += f.Offset
				fields = append(fields, g)
			}
		}
		for _, g := range fields {
			if g.Name == "_" || g.Type.Size() == 0 {
				continue
			}
			for l := g.Offset / cacheLine; l <= (g.Offset+g.Type.Size()-1)/cacheLine; l++ {
				if s, ok := owner[l]; ok && s != f.Name {
					t.Errorf("%s.%s shares line %d with section %s", f.Name, g.Name, l, s)
				}
				owner[l] = f.Name
			}
		}
	}
	require.Greater(t, len(owner), 4, "the walk found the sections' fields")
	require.Equal(t, "readMostly", owner[unsafe.Offsetof(e.busyUntil)/cacheLine], "busyUntil is read-mostly")
	require.Equal(t, "runQueue", owner[unsafe.Offsetof(e.state)/cacheLine], "the lifecycle is read with the run queue")
	require.Equal(t, "timersWaiting", owner[unsafe.Offsetof(e.timersWaiting)/cacheLine], "the waiting timers' count is alone on its line")
	require.Equal(t, "cold", owner[unsafe.Offsetof(e.wakeups)/cacheLine])

	require.Greater(t, unsafe.Offsetof(e.mu), unsafe.Offsetof(e.busyUntil), "the read-mostly fields come first")
	require.Zero(t, unsafe.Offsetof(e.mu)%cacheLine, "the run queue starts a cache line")
	require.LessOrEqual(t, unsafe.Sizeof(runQueue{}), cacheLine*2, "the run queue fits two lines")
	require.Greater(t, unsafe.Offsetof(e.timersWaiting), unsafe.Offsetof(e.laneTimers), "the waiting timers' count is past the run queue")
	require.Greater(t, unsafe.Offsetof(e.regMu), unsafe.Offsetof(e.timersWaiting), "the cold fields come last")
	require.Zero(t, unsafe.Sizeof(e)%cacheLine, "an executor is whole cache lines")
	require.Equal(t, uintptr(workerSize), unsafe.Sizeof(worker{}), "a worker is workerSize bytes")
	require.Equal(t, uintptr(256), unsafe.Sizeof(worker{}), "a worker is 256 bytes, a size class of whole lines")
}
