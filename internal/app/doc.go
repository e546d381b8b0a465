// Package app wires what a config.yaml describes into a running process:
// the embedded broker or a client of an external one, the executor on
// its clock (the system's, the precise timer source, or a simulated clock
// that follows the clock topic), the nodes, the metrics server and the
// Chrome trace, the graph topic, and run -record's recording. Check tells
// whether a config would start; Start starts it and App.Shutdown stops it
// with net/http.Server.Shutdown's contract.
//
// The robotexec command (package internal/cli) and the root package's
// Start are its users. An App's Shutdown may be called from any
// goroutine, more than once.
package app
