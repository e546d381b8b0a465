package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// listener is the net.Listener that mochi serves. Its own goroutine
// accepts TCP connections, refuses those beyond the connection limit, and
// starts a gate for each of the others (see gate.go); mochi's Accept gets
// a connection only once its gate has read the whole first packet, a
// CONNECT within the size limit. Until then a connection costs a goroutine
// and a small buffer, not a mochi client. It also keeps accepting after
// temporary errors (mochi's listener gives up on the first error), and
// remembers every connection, so that Close can end them.
type listener struct {
	raw       net.Listener
	tls       *tls.Config // nil for plain TCP
	maxConns  int
	maxFirst  int           // largest first packet, header included
	maxQueued int           // Config.MaxQueued: mochi's bound on a client's messages in flight
	deadline  time.Duration // from accepting a connection to its first packet
	counts    *counters
	log       *slog.Logger

	ready chan net.Conn  // connections whose gate passed them, to Accept
	quit  chan struct{}  // closed when the listener stops
	stop  sync.Once      // closes quit
	err   error          // why the accept loop ended, set before quit closes
	wg    sync.WaitGroup // the accept loop and the gates

	mu    sync.Mutex
	conns map[*trackedConn]struct{} // open: waiting at a gate or mochi's
}

func newListener(raw net.Listener, cfg Config, counts *counters, log *slog.Logger) *listener {
	l := &listener{
		raw: raw, tls: cfg.TLS, maxConns: cfg.MaxConnections, maxFirst: min(maxFirstPacket, cfg.MaxPacketSize),
		maxQueued: cfg.MaxQueued,
		deadline:  connectTimeout, counts: counts, log: log,
		ready: make(chan net.Conn), quit: make(chan struct{}), conns: make(map[*trackedConn]struct{}),
	}
	l.wg.Add(1)
	go l.acceptLoop()
	return l
}

// Accept returns the next connection whose first packet arrived and
// passed, to mochi.
func (l *listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.quit:
		if l.err != nil {
			return nil, l.err
		}
		return nil, net.ErrClosed
	}
}

// Close stops accepting; mochi calls it as it stops.
func (l *listener) Close() error {
	l.stop.Do(func() { close(l.quit) })
	return l.raw.Close()
}

func (l *listener) Addr() net.Addr { return l.raw.Addr() }

// acceptLoop accepts connections until the listener is closed or fails.
func (l *listener) acceptLoop() {
	defer l.wg.Done()
	delay := 5 * time.Millisecond
	for {
		c, err := l.raw.Accept()
		if err != nil {
			if !temporary(err) {
				l.stop.Do(func() { l.err = err; close(l.quit) })
				return
			}
			select {
			case <-time.After(delay):
			case <-l.quit:
				return
			}
			delay = min(2*delay, time.Second)
			continue
		}
		delay = 5 * time.Millisecond
		tc := l.track(c)
		if tc == nil {
			continue
		}
		l.wg.Add(1)
		go l.gate(tc, make([]byte, 0, firstBuffer))
	}
}

// track records c as open and returns it tracked, or closes it and
// returns nil when the listener stopped or MaxConnections are open.
func (l *listener) track(c net.Conn) *trackedConn {
	l.mu.Lock()
	select {
	case <-l.quit:
		l.mu.Unlock()
		_ = c.Close()
		return nil
	default:
	}
	if len(l.conns) >= l.maxConns {
		l.mu.Unlock()
		l.counts.refused.Add(1)
		l.log.Debug("connection refused: too many connections", "remote", c.RemoteAddr().String(), "max", l.maxConns)
		_ = c.Close()
		return nil
	}
	tc := &trackedConn{Conn: c, l: l, reading: make(chan struct{})}
	l.conns[tc] = struct{}{}
	l.mu.Unlock()
	return tc
}

// open returns the number of open connections.
func (l *listener) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// shutdown stops accepting, closes the connections still at their gate,
// and waits (up to closeGrace, or until ctx ends) until mochi started reading every
// connection it got: mochi counts a connection's goroutine in a WaitGroup
// that its Close waits on, from the goroutine itself, so Add must not race
// with Wait.
func (l *listener) shutdown(ctx context.Context) {
	_ = l.Close()
	for _, c := range l.snapshot() {
		if !c.handed.Load() {
			_ = c.Close()
		}
	}
	l.wg.Wait()
	ctx, cancel := context.WithTimeout(ctx, closeGrace)
	defer cancel()
	for _, c := range l.snapshot() {
		if !c.handed.Load() {
			continue
		}
		select {
		case <-c.reading:
		case <-ctx.Done():
			return
		}
	}
}

// closeAll closes every connection.
func (l *listener) closeAll() {
	_ = l.Close()
	for _, c := range l.snapshot() {
		_ = c.Close()
	}
}

func (l *listener) snapshot() []*trackedConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	conns := make([]*trackedConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	return conns
}

// trackedConn is an accepted TCP connection, open until closed.
type trackedConn struct {
	net.Conn
	l       *listener
	once    sync.Once
	handed  atomic.Bool   // passed its gate, to mochi
	reading chan struct{} // closed on mochi's first Read
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// temporary reports whether an Accept error is worth waiting out: the
// process ran out of file descriptors or memory, or a peer gave up while
// being accepted.
func temporary(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
