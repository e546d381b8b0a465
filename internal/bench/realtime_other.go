//go:build !linux

package bench

import "errors"

// realtimePermitted refuses: the real-time class is Linux's.
func realtimePermitted() error { return errors.New("the real-time class is Linux's") }
