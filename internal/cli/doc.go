// Package cli is the robotexec command line: its commands (run, validate,
// nodes, pub, echo, record, info, play, replay, node, topic, bench,
// version), their flags, their output and their exit codes, as docs/cli.md
// documents them. Run runs one command line; the root package's Main and Run
// call it with the program's version.
//
// It is the only package that parses flags and picks exit codes (the root
// package documents their values): what a config starts is package app's; replay's offline re-run of a recorded
// run (a simulated clock stepped from deadline to deadline, one worker
// spun by the replayer) lives here, beside the command that prints its
// comparison.
//
// Run keeps no state between calls; the commands that run until a signal
// stop on SIGINT and SIGTERM.
package cli
