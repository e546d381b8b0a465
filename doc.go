// Package robotexec is robotexec for Go programs: Main, the robotexec
// command, and Start, what robotexec run runs (the executor, the MQTT
// transport, the embedded broker and the nodes of a config.yaml), in a
// program of one's own. The command lives in internal/cli and the wiring
// in internal/app; this package is their public face.
//
// A program with node types of its own is three lines: import the node
// packages for their init functions and call Main, which provides the
// whole command line (run, validate, nodes, pub, echo, record, replay and
// the rest) with the built-in node types and the imported ones:
//
//	package main
//
//	import (
//		"github.com/robotexec/robotexec"
//		_ "example.com/mynodes/imufilter"
//	)
//
//	func main() { robotexec.Main() }
//
// A program that runs a config among other work uses [Start] and
// [App.Shutdown] instead: the same broker, executor and nodes as
// robotexec run, stopped with net/http.Server.Shutdown's contract.
package robotexec
