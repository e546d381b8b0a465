//go:build !amd64 && !arm64

package bus

import "unsafe"

// prefetchSlot does nothing here (see prefetch_asm.go).
func prefetchSlot(unsafe.Pointer) {}
