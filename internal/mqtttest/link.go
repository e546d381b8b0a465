package mqtttest

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// maxHeld bounds the bytes that one direction of a link holds back.
const maxHeld = 256 << 10

// dialTimeout bounds the proxy's connection to the broker.
const dialTimeout = 5 * time.Second

var errLinkClosed = errors.New("mqtttest: link closed")

// link is one relayed connection: the client's side, which the proxy
// accepted, and the broker's, which it dials. Its goroutines (a reader
// and a writer per direction) end when it closes.
type link struct {
	p        *Proxy
	client   net.Conn
	muted    atomic.Bool // drop what the broker sends
	up, down queue       // client to broker, broker to client
	done     chan struct{}

	mu     sync.Mutex
	broker net.Conn // nil until dialed
	dialed bool     // dialing began: the client's end now goes to the broker
	ends   int      // directions whose end was passed on
	closed bool
}

func newLink(p *Proxy, client net.Conn) *link {
	l := &link{p: p, client: client, done: make(chan struct{})}
	l.up.init()
	l.down.init()
	return l
}

// run reads the client at once, so that a client that gives up during a
// blackhole is seen, and relays both ways once no blackhole holds the
// link. The proxy's wait group counts it and the goroutines it starts.
func (l *link) run() {
	defer l.p.wg.Done()
	l.p.wg.Add(1)
	go l.read(l.client, &l.up, false)
	if !l.p.pass(l.done) {
		return
	}
	b, ok := l.dial()
	if !ok {
		return
	}
	l.p.wg.Add(3)
	go l.write(b, &l.up, true)
	go l.read(b, &l.down, true)
	go l.write(l.client, &l.down, false)
}

// dial connects the link to the broker; it closes the link when it
// cannot.
func (l *link) dial() (net.Conn, bool) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, false
	}
	l.dialed = true
	l.mu.Unlock()
	b, err := net.DialTimeout("tcp", l.p.target, dialTimeout)
	if err != nil {
		l.close(false)
		return nil, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = b.Close()
		return nil, false
	}
	l.broker = b
	return b, true
}

// read queues what src sends, stamped with the time it may be written,
// then its end. fromBroker says which side src is.
func (l *link) read(src net.Conn, q *queue, fromBroker bool) {
	defer l.p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !(fromBroker && l.muted.Load()) {
			if !q.put(chunk{b: bytes.Clone(buf[:n]), due: l.p.due()}) {
				return
			}
		}
		if err == nil {
			continue
		}
		if !fromBroker && !l.isDialed() {
			// Closed before the blackhole healed: it never reached the
			// broker, and never will.
			l.close(false)
			return
		}
		q.put(chunk{end: true, due: l.p.due()})
		return
	}
}

func (l *link) isDialed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dialed
}

// due returns when a chunk read now may be written.
func (p *Proxy) due() time.Time { return time.Now().Add(time.Duration(p.delay.Load())) }

// write writes what q holds to dst, each chunk once due and no blackhole
// holds it, at the throttled rate, then the end of the other side (see
// ended).
func (l *link) write(dst net.Conn, q *queue, toBroker bool) {
	defer l.p.wg.Done()
	var next time.Time // the throttle's: when the next piece may go
	for {
		c, ok := q.get()
		if !ok || !l.sleepUntil(c.due) || !l.p.pass(l.done) {
			return
		}
		if c.end {
			l.ended(dst, toBroker && l.muted.Load())
			return
		}
		if err := l.send(dst, c.b, &next); err != nil {
			l.close(false)
			return
		}
	}
}

// ended passes on the end of one direction: it closes dst for writing,
// but when hold is set (a muted link whose client ended: the broker's
// side stays open, as a dead network leaves it), and closes the link once
// both directions ended.
func (l *link) ended(dst net.Conn, hold bool) {
	l.mu.Lock()
	l.ends++
	both := l.ends == 2
	l.mu.Unlock()
	switch {
	case both:
		l.close(false)
	case hold:
	default:
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		} else {
			l.close(false)
		}
	}
}

// send writes b to dst, in pieces of 20 ms at the throttle's rate, each
// after the previous one's time has passed, when a throttle is on.
func (l *link) send(dst net.Conn, b []byte, next *time.Time) error {
	for len(b) > 0 {
		n := len(b)
		rate := l.p.throttle.Load()
		if rate > 0 {
			n = min(n, max(1, int(rate/50)))
			if !l.sleepUntil(*next) || !l.p.pass(l.done) {
				return errLinkClosed
			}
		}
		if _, err := dst.Write(b[:n]); err != nil {
			return err
		}
		if rate > 0 {
			now := time.Now()
			if next.Before(now) {
				*next = now
			}
			*next = next.Add(time.Duration(n) * time.Second / time.Duration(rate))
		}
		b = b[n:]
	}
	return nil
}

// sleepUntil waits until t, or until the link closes; it reports whether
// the link is still open.
func (l *link) sleepUntil(t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		select {
		case <-l.done:
			return false
		default:
			return true
		}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-l.done:
		return false
	}
}

// close closes both sides of the link, with a reset (rst) or an orderly
// close, drops what it holds, and removes it from the proxy.
func (l *link) close(rst bool) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	b := l.broker
	l.mu.Unlock()
	close(l.done)
	l.up.close()
	l.down.close()
	for _, c := range []net.Conn{l.client, b} {
		if c == nil {
			continue
		}
		if tc, ok := c.(*net.TCPConn); ok && rst {
			// No lingering: close sends a reset instead of a FIN.
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	}
	l.p.forget(l)
}

// chunk is what one read returned, or the end of its source.
type chunk struct {
	b   []byte
	due time.Time // when it may be written
	end bool      // the source ended after the chunks before
}

// queue is a FIFO of chunks between one reader and one writer that holds
// at most maxHeld bytes: a full queue stops its reader.
type queue struct {
	mu     sync.Mutex
	cond   sync.Cond
	chunks []chunk
	held   int
	closed bool
}

func (q *queue) init() { q.cond.L = &q.mu }

// put appends c, waiting while the queue is full; it reports false once
// the queue is closed.
func (q *queue) put(c chunk) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.held >= maxHeld && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return false
	}
	q.chunks = append(q.chunks, c)
	q.held += len(c.b)
	q.cond.Broadcast()
	return true
}

// get takes the oldest chunk, waiting while there is none; it reports
// false once the queue is closed.
func (q *queue) get() (chunk, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.chunks) == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return chunk{}, false
	}
	c := q.chunks[0]
	q.chunks[0] = chunk{}
	q.chunks = q.chunks[1:]
	q.held -= len(c.b)
	q.cond.Broadcast()
	return c, true
}

// close wakes the queue's reader and writer for good.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.chunks = nil
	q.cond.Broadcast()
	q.mu.Unlock()
}
