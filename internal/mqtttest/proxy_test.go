package mqtttest_test

import (
	"bytes"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtttest"
)

// bound bounds every wait of the proxy's tests.
const bound = 5 * time.Second

// echoServer echoes what each connection sends and records how many
// connections it accepted and how their reads ended.
type echoServer struct {
	ln       net.Listener
	accepted atomic.Int32
	ends     chan error
}

func newEchoServer(t *testing.T) *echoServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &echoServer{ln: ln, ends: make(chan error, 16)}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			go func() {
				_, err := io.Copy(c, c)
				_ = c.Close()
				if err == nil {
					err = io.EOF // io.Copy reports the end of file as nil
				}
				s.ends <- err
			}()
		}
	}()
	return s
}

func (s *echoServer) addr() string { return s.ln.Addr().String() }

// dialProxy connects to p and closes the connection when the test ends.
func dialProxy(t *testing.T, p *mqtttest.Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// readWithin reads n bytes from c within d.
func readWithin(c net.Conn, n int, d time.Duration) ([]byte, error) {
	buf := make([]byte, n)
	_ = c.SetReadDeadline(time.Now().Add(d))
	defer c.SetReadDeadline(time.Time{})
	k, err := io.ReadFull(c, buf)
	return buf[:k], err
}

// echoed writes msg to c and reads it back within d.
func echoed(t *testing.T, c net.Conn, msg string, d time.Duration) {
	t.Helper()
	_, err := c.Write([]byte(msg))
	require.NoError(t, err)
	got, err := readWithin(c, len(msg), d)
	require.NoError(t, err)
	require.Equal(t, msg, string(got))
}

// waitCond polls cond every 5 ms up to bound.
func waitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		require.False(t, time.Now().After(deadline), "timed out waiting for %s", what)
		time.Sleep(5 * time.Millisecond)
	}
}

// A blackhole carries nothing either way and closes nothing; a connection
// made during it reaches nothing, and one closed before the heal never
// reaches the server. At the heal, the bytes held back arrive, in order.
func TestProxyBlackhole(t *testing.T) {
	t.Parallel()
	s := newEchoServer(t)
	p := mqtttest.NewProxy(t, s.addr())
	c := dialProxy(t, p)
	echoed(t, c, "before", bound)

	p.Blackhole(true)
	require.True(t, p.Blackholed())
	_, err := c.Write([]byte("held"))
	require.NoError(t, err)
	got, err := readWithin(c, 4, 300*time.Millisecond)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "read %q through the blackhole", got)
	require.Empty(t, got)

	late := dialProxy(t, p) // the kernel accepts it
	_, err = late.Write([]byte("early"))
	require.NoError(t, err)
	gone := dialProxy(t, p)
	_, err = gone.Write([]byte("never"))
	require.NoError(t, err)
	waitCond(t, "three connections", func() bool { return p.Open() == 3 })
	require.NoError(t, gone.Close())
	waitCond(t, "the closed one dropped", func() bool { return p.Open() == 2 })
	_, err = readWithin(late, 5, 100*time.Millisecond)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.EqualValues(t, 1, s.accepted.Load(), "the server saw a connection made during the blackhole")

	healed := time.Now()
	p.Blackhole(false)
	require.False(t, p.Blackholed())
	got, err = readWithin(c, 4, bound)
	require.NoError(t, err)
	require.Equal(t, "held", string(got))
	got, err = readWithin(late, 5, bound)
	require.NoError(t, err)
	require.Equal(t, "early", string(got))
	t.Logf("held bytes delivered %v after the heal", time.Since(healed))
	echoed(t, c, "after", bound)
	require.EqualValues(t, 2, s.accepted.Load(), "connections that reached the server")
	p.Blackhole(false) // no blackhole: nothing happens
}

// The end of a connection closed during a blackhole arrives after the
// heal, after the bytes sent before it.
func TestProxyBlackholeHoldsTheEnd(t *testing.T) {
	t.Parallel()
	s := newEchoServer(t)
	p := mqtttest.NewProxy(t, s.addr())
	c := dialProxy(t, p)
	echoed(t, c, "x", bound)
	p.Blackhole(true)
	_, err := c.Write([]byte("last words"))
	require.NoError(t, err)
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	select {
	case err := <-s.ends:
		t.Fatalf("the server saw the end through the blackhole: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	p.Blackhole(false)
	got, err := readWithin(c, len("last words"), bound)
	require.NoError(t, err)
	require.Equal(t, "last words", string(got))
	select {
	case err := <-s.ends:
		require.ErrorIs(t, err, io.EOF)
	case <-time.After(bound):
		t.Fatal("the end did not arrive after the heal")
	}
}

// Delay delays each direction: a round trip takes twice the delay more,
// and the bytes keep their order.
func TestProxyDelay(t *testing.T) {
	t.Parallel()
	s := newEchoServer(t)
	p := mqtttest.NewProxy(t, s.addr())
	c := dialProxy(t, p)
	echoed(t, c, "warm", bound)
	const d = 100 * time.Millisecond
	p.Delay(d)
	start := time.Now()
	echoed(t, c, "slow", bound)
	rtt := time.Since(start)
	require.GreaterOrEqual(t, rtt, 2*d)
	t.Logf("round trip with a delay of %v: %v", d, rtt)

	var want bytes.Buffer
	for i := range 200 {
		msg := []byte{byte('a' + i%26)}
		want.Write(msg)
		_, err := c.Write(msg)
		require.NoError(t, err)
	}
	got, err := readWithin(c, want.Len(), bound)
	require.NoError(t, err)
	require.Equal(t, want.String(), string(got))

	p.Delay(0)
	start = time.Now()
	echoed(t, c, "fast", bound)
	require.Less(t, time.Since(start), 2*d)
}

// Throttle bounds the rate of each direction; 0 lifts the limit.
func TestProxyThrottle(t *testing.T) {
	t.Parallel()
	s := newEchoServer(t)
	p := mqtttest.NewProxy(t, s.addr())
	c := dialProxy(t, p)
	echoed(t, c, "warm", bound)
	const rate, size = 100_000, 50_000
	piece := rate / 50
	payload := bytes.Repeat([]byte("z"), size)

	p.Throttle(rate)
	start := time.Now()
	go func() { _, _ = c.Write(payload) }()
	got, err := readWithin(c, size, bound)
	took := time.Since(start)
	require.NoError(t, err)
	require.Equal(t, payload, got)
	min := time.Duration(size-piece) * time.Second / rate
	require.GreaterOrEqual(t, took, min, "%d bytes at %d B/s", size, rate)
	t.Logf("%d bytes echoed at %d B/s in %v (at least %v)", size, rate, took, min)

	p.Throttle(0)
	start = time.Now()
	go func() { _, _ = c.Write(payload) }()
	_, err = readWithin(c, size, bound)
	require.NoError(t, err)
	require.Less(t, time.Since(start), min, "unthrottled")
}

// Reset ends the connections with a TCP reset on both sides, where Cut
// ends them with an end of file.
func TestProxyResetAndCut(t *testing.T) {
	t.Parallel()
	s := newEchoServer(t)
	p := mqtttest.NewProxy(t, s.addr())
	ends := func(fault func() int) (client, server error) {
		c := dialProxy(t, p)
		echoed(t, c, "x", bound)
		require.Equal(t, 1, fault())
		_, client = readWithin(c, 1, bound)
		select {
		case server = <-s.ends:
		case <-time.After(bound):
			t.Fatal("the server's side did not end")
		}
		return client, server
	}
	client, server := ends(p.Reset)
	require.ErrorIs(t, client, syscall.ECONNRESET)
	require.ErrorIs(t, server, syscall.ECONNRESET)
	client, server = ends(p.Cut)
	require.ErrorIs(t, client, io.EOF)
	require.ErrorIs(t, server, io.EOF)
	require.Zero(t, p.Open())
}

// Mute drops what the server sends and relays what the client sends; the
// server's side outlives the client's, as a dead network leaves it, until
// Cut.
func TestProxyMute(t *testing.T) {
	t.Parallel()
	s := newEchoServer(t)
	p := mqtttest.NewProxy(t, s.addr())
	c := dialProxy(t, p)
	echoed(t, c, "x", bound)
	p.Mute()
	_, err := c.Write([]byte("dropped"))
	require.NoError(t, err)
	_, err = readWithin(c, 1, 300*time.Millisecond)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.NoError(t, c.Close())
	select {
	case err := <-s.ends:
		t.Fatalf("the client's end reached the server: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	require.Equal(t, 1, p.Open())
	fresh := dialProxy(t, p)
	echoed(t, fresh, "y", bound)
	require.Equal(t, 2, p.Cut())
	for range 2 {
		select {
		case err := <-s.ends:
			require.ErrorIs(t, err, io.EOF)
		case <-time.After(bound):
			t.Fatal("Cut did not end the server's sides")
		}
	}
}
