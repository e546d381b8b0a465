package mqtttest

import (
	"fmt"
	"net"
	"testing"
)

// TestFreePortBelowEphemeral checks that the ports handed out are distinct,
// bindable, and below the range the kernel gives to outgoing connections.
func TestFreePortBelowEphemeral(t *testing.T) {
	high := ephemeralLow()
	seen := map[int]bool{}
	for range 50 {
		p := FreePort(t)
		if p < lowestPort || p >= high {
			t.Fatalf("port %d outside %d-%d", p, lowestPort, high-1)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("bind the port handed out: %v", err)
		}
		l.Close()
	}
}
