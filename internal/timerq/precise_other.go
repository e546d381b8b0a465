//go:build !linux

package timerq

const preciseSupported = false

func newPreciseAlarm(func()) Alarm { return nil }
