//go:build amd64 || arm64

package bus

import "unsafe"

// prefetchSlot asks the CPU to fetch the cache lines of the slot at p for
// writing, without waiting for them; it changes nothing a program can
// see. It is called only where canPrefetch is set.
//
//go:noescape
func prefetchSlot(p unsafe.Pointer)
