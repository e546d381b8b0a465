package mqtttest

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// Proxy relays TCP connections from its own loopback address to a broker.
// Cut closes the connections it relays without an MQTT DISCONNECT, as a
// crash or a broken link would: the broker publishes the client's last
// will and keeps its persistent session, and the client reconnects through
// the proxy.
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	pairs   map[net.Conn]net.Conn
	closed  bool
	refused bool
	wg      sync.WaitGroup
	muted   map[net.Conn]*atomic.Bool // by client connection: drop what the broker sends
}

// NewProxy starts a proxy to target (host:port) and stops it when the test
// ends.
func NewProxy(t TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mqtttest: proxy listen: %v", err)
	}
	p := &Proxy{ln: ln, target: target, pairs: make(map[net.Conn]net.Conn), muted: make(map[net.Conn]*atomic.Bool)}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.Close)
	return p
}

// Addr returns the proxy's address.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL returns tcp://Addr().
func (p *Proxy) URL() string { return "tcp://" + p.Addr() }

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refused := p.refused
		p.mu.Unlock()
		if refused {
			_ = c.Close()
			continue
		}
		b, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = c.Close()
			_ = b.Close()
			return
		}
		p.pairs[c] = b
		muted := new(atomic.Bool)
		p.muted[c] = muted
		p.wg.Add(2)
		p.mu.Unlock()
		go p.pipe(c, &muting{r: b, muted: muted}, nil)
		go p.pipe(b, c, muted)
	}
}

// pipe copies src to dst; src is a broker connection wrapped in muting,
// or a client connection, whose end leaves the broker's side open while
// hold is set.
func (p *Proxy) pipe(dst net.Conn, src io.Reader, hold *atomic.Bool) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	if hold != nil && hold.Load() {
		// The broker's side waits for the broker, Cut or Close; the
		// other pipe closes both.
		return
	}
	conn := src
	if m, ok := src.(*muting); ok {
		conn = m.r
	}
	_ = dst.Close()
	_ = conn.(net.Conn).Close()
	p.mu.Lock()
	delete(p.pairs, dst)
	delete(p.pairs, conn.(net.Conn))
	delete(p.muted, dst)
	p.mu.Unlock()
}

// Open returns the number of connections the proxy relays now.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pairs)
}

// Cut closes every connection the proxy relays now; new connections are
// still accepted. It returns how many it closed.
func (p *Proxy) Cut() int {
	p.mu.Lock()
	pairs := p.pairs
	p.pairs = make(map[net.Conn]net.Conn)
	p.muted = make(map[net.Conn]*atomic.Bool)
	p.mu.Unlock()
	for c, b := range pairs {
		_ = c.Close()
		_ = b.Close()
	}
	return len(pairs)
}

// Mute makes the connections the proxy relays now drop what the broker
// sends, while they relay what the clients send: a one-way blackhole, in
// which the broker's messages to a client are lost as they would be in a
// link that dies. A client that gives such a connection up closes only
// its side: the broker's stays open, as a dead network leaves it, until
// the broker gives it up, or Cut. New connections are relayed both ways.
func (p *Proxy) Mute() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.muted {
		m.Store(true)
	}
}

// muting reads from r, dropping what it read once muted.
type muting struct {
	r     net.Conn
	muted *atomic.Bool
}

func (m *muting) Read(b []byte) (int, error) {
	for {
		n, err := m.r.Read(b)
		if n == 0 || !m.muted.Load() {
			return n, err
		}
		if err != nil {
			return 0, err
		}
	}
}

// Refuse makes the proxy close new connections at once (refuse true) or
// relay them again (false), so that a test can keep a client away from the
// broker for a while.
func (p *Proxy) Refuse(refuse bool) {
	p.mu.Lock()
	p.refused = refuse
	p.mu.Unlock()
}

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	_ = p.ln.Close()
	p.Cut()
	p.wg.Wait()
}
