// Package broker embeds an MQTT broker (mochi-mqtt) in the process, so
// that robotexec runs with no external service: [New] starts it on a TCP
// address (loopback by default) and robotexec's own MQTT client connects to
// it like any other client, so external tools (mosquitto_pub,
// mosquitto_sub, robotexec pub and echo) can use it too.
//
// The broker speaks MQTT 3.1.1 and 5 with QoS 0, 1 and 2, retained
// messages, last wills, shared subscriptions ($share/GROUP/FILTER) and
// persistent sessions. Sessions, queued messages and retained messages live
// in memory only: they survive a client's reconnection, not a restart of
// the broker.
//
// Its limits are set for a robot rather than for a server farm; see
// [Config]. It bounds its connections, what a client may send before it
// has authenticated (64 KiB) and after (Config.MaxPacketSize), checking a
// packet's size before it allocates memory for it, and [Broker.Stats]
// counts what it refused. It sends an MQTT 5 client at most its Receive
// Maximum of QoS 1 and 2 messages unacknowledged, holding the others in
// order. By default anyone may connect; [Config.Users] restricts
// connections to named users. Its logs go to the given slog logger, with
// the broker's routine messages demoted to Debug so that a running robot's
// log shows only what needs attention.
//
// This is the only package of robotexec that imports mochi-mqtt.
//
// # Concurrency
//
// A [Broker] is safe for concurrent use; Close may be called any number of
// times from any goroutine.
package broker
