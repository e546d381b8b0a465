//go:build !linux

package executor

import "errors"

// lowerThread does nothing: threads' nice values are Linux's.
func lowerThread(int) {}

// realtimeThread refuses: the real-time class is Linux's.
func realtimeThread() error {
	return errors.New("the real-time scheduling class is supported on Linux only")
}
