//go:build !linux

package threadsched

import "errors"

// errNotLinux is why the real-time class is refused here.
var errNotLinux = errors.New("the real-time scheduling class is supported on Linux only")

// Lower does nothing: threads' nice values are Linux's.
func Lower(int) {}

// Realtime refuses: the real-time class is Linux's.
func Realtime() error { return errNotLinux }

// RealtimePermitted refuses: the real-time class is Linux's.
func RealtimePermitted() error { return errNotLinux }

// errNoAffinity is why threads are not pinned here.
var errNoAffinity = errors.New("pinning threads to CPUs is supported on Linux only")

// Allowed refuses: threads' CPU affinity is Linux's.
func Allowed() ([]int, error) { return nil, errNoAffinity }

// Pin refuses: threads' CPU affinity is Linux's.
func Pin(int) error { return errNoAffinity }
