package mqtttest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Ports for a test's processes are chosen below the kernel's ephemeral
// range. A port asked of the kernel with :0 comes from that range, and so
// does the local port of every outgoing connection: a test's paho client
// could take it between the check here and the child's bind. Below the
// range only another test choosing the same way can, and a random choice
// over thousands of ports makes that rare.
const lowestPort = 10000

var ports struct {
	sync.Mutex
	given map[int]bool // handed out by this process
	high  int          // the first ephemeral port
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago,
// below the ephemeral range and not handed out before by this process.
// Another process may still take it before the caller binds it; callers
// that can should retry with a new port when binding fails.
func FreePort(t TB) int {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatalf("mqtttest: %v", err)
	}
	return port
}

func freePort() (int, error) {
	ports.Lock()
	defer ports.Unlock()
	if ports.given == nil {
		ports.given = map[int]bool{}
		ports.high = ephemeralLow()
	}
	for range 200 {
		p := lowestPort + rand.IntN(ports.high-lowestPort)
		if ports.given[p] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		if err := l.Close(); err != nil {
			return 0, fmt.Errorf("find a free port: %w", err)
		}
		ports.given[p] = true
		return p, nil
	}
	return 0, fmt.Errorf("find a free port: none free of 200 tried in %d-%d", lowestPort, ports.high-1)
}

// ephemeralLow is the first port of the kernel's ephemeral range, or
// Linux's default where the range cannot be read.
func ephemeralLow() int {
	const linuxDefault = 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return linuxDefault
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return linuxDefault
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low <= lowestPort+1000 {
		return linuxDefault
	}
	return low
}
