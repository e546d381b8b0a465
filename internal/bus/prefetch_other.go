//go:build !amd64 && !arm64

package bus

import "unsafe"

// canPrefetch reports whether prefetchSlot does anything: not here.
const canPrefetch = false

// prefetchSlot does nothing here (see prefetch_asm.go).
func prefetchSlot(unsafe.Pointer) {}
