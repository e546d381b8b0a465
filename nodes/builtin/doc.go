// Package builtin holds the node types that ship with robotexec, so that
// bridging sensor topics needs no code:
//
//   - bridge: republishes messages from a topic filter to a topic template,
//     with optional rate limiting and JSON checking;
//   - heartbeat: publishes {"node","seq","time"} every period;
//   - watchdog: publishes a stale alarm for each watched topic that falls
//     silent, and an ok when it speaks again.
//
// Importing the package registers them (the robotexec root package does).
package builtin

// Types returns the names of the node types this package registers. Their
// callbacks are short (a copy, a check, a timestamp): robotexec run runs a
// config of these alone on one processor (executor.procs).
func Types() []string { return []string{"bridge", "heartbeat", "watchdog"} }
