// Package mqtttest starts real MQTT brokers for tests: the embedded broker
// (package internal/mqtt/broker) on a free loopback port, and Debian's
// mosquitto with its own config file on a free loopback port, stopped by
// its PID and restarted on the same port. A TCP [Proxy] between a client
// and a broker injects the faults of a network: it cuts connections
// without a clean MQTT DISCONNECT, as a crash or a lost network link
// would (Cut, or Reset with a TCP reset), refuses new ones (Refuse), stops
// carrying bytes one way (Mute) or both ways (Blackhole), and delays
// (Delay) or throttles (Throttle) what it carries.
//
// Tests that need mosquitto call [Mosquitto]: it finds the binary through
// the ROBOTEXEC_MOSQUITTO environment variable, PATH or /usr/sbin, skips
// the test when there is none, naming the install, and fails it instead
// under ROBOTEXEC_TEST_ALL=1 (package internal/testenv), which .ci/run
// sets, so that CI never skips them.
//
// Every helper registers its cleanup with the test and bounds each wait
// with a deadline, so a broken broker fails the test instead of hanging it.
//
// # Concurrency
//
// The helpers may be called from parallel tests. A [Broker]'s Stop and
// Start and every method of a Proxy are safe for concurrent use, but Stop
// and Start of one broker must not race each other.
package mqtttest
