package waitset

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// An entity's hot fields have a cache line of their own, and so do a set's
// stacks and its counters (see Entity and Set).
func TestCacheLineLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the layout is for 64-bit platforms")
	}
	var e Entity
	require.Equal(t, uintptr(128), unsafe.Sizeof(e), "an entity is two lines")
	require.Less(t, unsafe.Offsetof(e.Data), uintptr(64), "what never changes is on the first line")
	require.Equal(t, uintptr(64), unsafe.Offsetof(e.word), "what changes starts the second")
	require.Less(t, unsafe.Offsetof(e.readies), uintptr(128))

	var s Set
	require.Equal(t, uintptr(192), unsafe.Sizeof(s), "a set is three lines, a size class of whole lines")
	require.Equal(t, uintptr(64), unsafe.Offsetof(s.pending))
	require.Equal(t, uintptr(128), unsafe.Offsetof(s.ids))
}
