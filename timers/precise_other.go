//go:build !linux

package timers

const preciseSupported = false

func newPreciseAlarm(func()) Alarm { return nil }
