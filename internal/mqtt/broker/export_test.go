package broker

import (
	"testing"
	"time"
)

// SetConnectTimeout sets the time a connection has for its CONNECT in the
// brokers that New makes until t ends. Tests that call it must not run in
// parallel.
func SetConnectTimeout(t testing.TB, d time.Duration) {
	old := connectTimeout
	connectTimeout = d
	t.Cleanup(func() { connectTimeout = old })
}
