package timerq

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A timer is whole cache lines, so that its entity's lines are whole too
// (see waitset.Entity).
func TestCacheLineLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the layout is for 64-bit platforms")
	}
	require.Equal(t, uintptr(256), unsafe.Sizeof(Timer{}), "256 bytes, a size class of whole lines")
}
