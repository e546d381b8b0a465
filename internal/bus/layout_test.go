package bus

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A subscription is whole cache lines, its queue's fields on the line after
// the entity's (see Subscription).
func TestCacheLineLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the layout is for 64-bit platforms")
	}
	var s Subscription
	require.Zero(t, unsafe.Sizeof(s)%64, "whole lines, so a size class of whole lines")
	require.Equal(t, uintptr(128), unsafe.Offsetof(s.mu), "the queue starts the line after the entity")
	require.Less(t, unsafe.Offsetof(s.seq), uintptr(192), "and fits it")
	require.Equal(t, uintptr(192), unsafe.Offsetof(s.subRest), "what rarely changes starts the next line")
}
