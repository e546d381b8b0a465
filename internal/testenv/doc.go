// Package testenv decides what a test does when this machine lacks a
// program outside Go that it needs (mosquitto, Chromium, spin, Node): it
// skips, with one line naming the command that installs the program, so
// that `go test -race ./...` passes where only Go is installed; and it
// fails instead when the environment variable ROBOTEXEC_TEST_ALL is 1,
// which .ci/run sets after installing them all, so that CI runs every
// test.
//
// A package whose tests may skip calls [Run] from its TestMain: after
// its tests, Run writes one line per missing program to the terminal,
// so that a plain `go test ./...`, which prints nothing of a passing
// package, still says what it did not run.
//
// The functions are safe for concurrent use by parallel tests.
package testenv
