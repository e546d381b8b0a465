// Package cli is the robotexec command line: its commands (run, validate,
// nodes, pub, echo, record, info, play, replay, node, topic, bench,
// version), their flags, their output and their exit codes, as SPEC.md
// fixes them. Run runs one command line; the root package's Main and Run
// call it with the program's version.
//
// It is the only package that knows about flags and exit codes: what a
// config starts is package app's; replay's offline re-run of a recorded
// run (a simulated clock stepped from deadline to deadline, one worker
// spun by the replayer) lives here, beside the command that prints its
// comparison.
//
// Run may be called from several goroutines at once; the commands that
// run until a signal listen for SIGINT and SIGTERM while they run.
package cli
