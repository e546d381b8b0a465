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
