//go:build amd64 && !linux

package tsc

// agree reports false: the check pins threads to CPUs, which it does on
// Linux only.
func agree() bool { return false }
