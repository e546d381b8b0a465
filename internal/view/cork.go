package view

import (
	"net"
	"sync"
)

// Bounds of a burst: the frames a connection's writer sends in one write
// to the socket when several are queued.
const (
	burstFrames = 64
	burstBytes  = 64 << 10
)

// corkListener accepts connections whose writes can be held back and sent
// together (corkConn).
type corkListener struct{ net.Listener }

// Accept returns the next connection, as a *corkConn.
func (l corkListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &corkConn{Conn: c}, nil
}

// corkConn is a connection whose writer can cork it, so that what the
// WebSocket library writes frame by frame is kept, and flush it, so that
// it leaves in one write: a burst of frames costs one system call, and one
// wake-up of the viewer, instead of one per frame. Uncorked, a write goes
// straight through (HTTP responses, and the reader's control frames
// between bursts).
type corkConn struct {
	net.Conn
	mu     sync.Mutex
	corked bool
	buf    []byte
}

// Write writes b, or keeps it while the connection is corked.
func (c *corkConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked {
		c.buf = append(c.buf, b...)
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// cork holds the writes back until flush.
func (c *corkConn) cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// flush writes what was held back in one write and uncorks.
func (c *corkConn) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	if cap(c.buf) > 4*burstBytes {
		c.buf = nil // a control message made it large: do not keep it
	} else {
		c.buf = c.buf[:0]
	}
	return err
}
