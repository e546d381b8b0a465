// Package robotexec wires the executor, the MQTT transport, the embedded
// broker and the nodes of a config.yaml into the robotexec command.
//
// A program with node types of its own is three lines: import the node
// packages for their init functions and call Main, which provides the whole
// command line (run, validate, nodes, pub, echo, version) with the built-in
// node types and the imported ones:
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
