package mqtttest

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy relays TCP connections from its own loopback address to a broker,
// and injects the faults of a network between them.
//
// Cut closes the connections it relays without an MQTT DISCONNECT, as a
// crash or a broken link would: the broker publishes the client's last
// will and keeps its persistent session, and the client reconnects through
// the proxy. Reset does the same with a TCP reset instead of an orderly
// close. Mute and Blackhole make links that stay open but carry nothing,
// one way or both; Delay and Throttle make a slow link.
//
// Every connection is relayed in both directions by a reader, which
// stamps and queues what it reads (up to 256 KiB, then it stops reading
// and the sender's TCP window closes, as on a slow link), and a writer,
// which writes the queued bytes once their delay has passed, while no
// blackhole holds them, at the throttled rate. The end of one side (its
// FIN) travels the same way, after the bytes sent before it, and ends
// that direction only, as a half-close does; the proxy closes both sides
// once both directions ended.
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	links   map[*link]struct{}
	closed  bool
	refused bool
	hole    chan struct{} // not nil during a blackhole; closed when it heals
	wg      sync.WaitGroup

	delay    atomic.Int64 // time.Duration added to every chunk
	throttle atomic.Int64 // bytes per second in each direction of each connection; 0: no limit
}

// NewProxy starts a proxy to target (host:port) and stops it when the test
// ends.
func NewProxy(t TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mqtttest: proxy listen: %v", err)
	}
	p := &Proxy{ln: ln, target: target, links: make(map[*link]struct{})}
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
		if p.refused || p.closed {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		l := newLink(p, c)
		p.links[l] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go l.run()
	}
}

// Open returns the number of connections the proxy relays now, those that
// a blackhole holds included.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.links)
}

// take removes every link from the proxy and returns them.
func (p *Proxy) take() []*link {
	p.mu.Lock()
	defer p.mu.Unlock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	clear(p.links)
	return links
}

// forget removes l from the proxy.
func (p *Proxy) forget(l *link) {
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
}

// Cut closes every connection the proxy relays now, on both sides, with
// an orderly close (FIN); new connections are still accepted. It returns
// how many it closed. What the proxy held back for them (delay, blackhole)
// is dropped.
func (p *Proxy) Cut() int {
	links := p.take()
	for _, l := range links {
		l.close(false)
	}
	return len(links)
}

// Reset closes every connection the proxy relays now, on both sides, with
// a TCP reset (RST): the client and the broker see "connection reset by
// peer" instead of an end of file, as when a firewall or a NAT forgets
// the connection or a peer's host reboots. New connections are still
// accepted. It returns how many it reset. Unlike a real reset, it takes
// effect during a blackhole too.
func (p *Proxy) Reset() int {
	links := p.take()
	for _, l := range links {
		l.close(true)
	}
	return len(links)
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
	for l := range p.links {
		l.muted.Store(true)
	}
}

// Blackhole starts (on) or heals (off) a blackhole between the clients
// and the broker: a link that stops carrying anything, both ways, without
// closing. The connections stay open on both sides, and nothing they send
// arrives; a connection made during the blackhole is accepted (the
// client's kernel completes it with the proxy's) but reaches nothing: the
// broker does not see it. Blackhole(true) during a blackhole, or
// Blackhole(false) without one, does nothing.
//
// What is sent during a blackhole is held back and delivered when it
// heals, in order, as TCP delivers what it retransmits when a link comes
// back before the connection timed out; an end (a peer that closed its
// side) is delivered after it. Up to 256 KiB are held per direction of a
// connection; beyond that the proxy stops reading, and the sender's
// writes block once its kernel's buffers are full, as they would. A
// connection made during the blackhole whose client closes it before the
// heal is dropped without ever reaching the broker, as a connection
// whose handshake never got through; one still open at the heal is
// relayed from then on, its early bytes first.
func (p *Proxy) Blackhole(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case on && p.hole == nil:
		p.hole = make(chan struct{})
	case !on && p.hole != nil:
		close(p.hole)
		p.hole = nil
	}
}

// Blackholed reports whether a blackhole is on.
func (p *Proxy) Blackholed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hole != nil
}

// pass waits until no blackhole is on, or done is closed; it reports
// whether no blackhole is on.
func (p *Proxy) pass(done <-chan struct{}) bool {
	for {
		p.mu.Lock()
		hole := p.hole
		p.mu.Unlock()
		if hole == nil {
			return true
		}
		select {
		case <-hole:
		case <-done:
			return false
		}
	}
}

// Delay delays every chunk of bytes read from now on, in both directions
// of every connection, by d: the proxy writes it d after it read it, so a
// round trip takes 2d more. The ends of connections are delayed too. 0
// removes the delay (chunks already delayed keep theirs); a negative d is
// 0. The delay adds to the link's in user space: it is not netem, whose
// kernel module this machine may lack.
func (p *Proxy) Delay(d time.Duration) { p.delay.Store(int64(max(d, 0))) }

// Throttle limits each direction of each connection the proxy relays to
// bytesPerSecond, from the next chunk written on; 0 (or less) removes the
// limit. The proxy writes at most 20 ms worth of bytes at a time (at
// least one byte) and waits for the time they take at that rate, so the
// bytes written by time t since the limit began never exceed
// bytesPerSecond × t plus one such piece.
func (p *Proxy) Throttle(bytesPerSecond int) { p.throttle.Store(int64(max(bytesPerSecond, 0))) }

// Refuse makes the proxy close new connections at once (refuse true) or
// relay them again (false), so that a test can keep a client away from the
// broker for a while.
func (p *Proxy) Refuse(refuse bool) {
	p.mu.Lock()
	p.refused = refuse
	p.mu.Unlock()
}

// Close stops the proxy and closes its connections, dropping what it held
// back for them. It waits for the proxy's goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	_ = p.ln.Close()
	p.Cut()
	p.wg.Wait()
}
