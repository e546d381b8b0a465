package view

import (
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gorilla/websocket"
)

// Opcodes of the binary messages.
const (
	opMessageData       = 0x01 // server to viewer
	opTime              = 0x02 // server to viewer
	opClientMessageData = 0x01 // viewer to server
)

// maxControl bounds the text messages waiting for a connection's writer;
// status messages beyond it are dropped (a viewer that floods the server
// with bad requests gets fewer answers).
const maxControl = 256

// frame is a message waiting in a connection's send queue.
type frame struct {
	sub     uint32
	ch      *channel
	ts      uint64
	payload []byte
}

// conn is a viewer's connection: its reader (serve) handles the viewer's
// requests, its writer (write) sends what the server has for it.
type conn struct {
	s    *Server
	ws   *websocket.Conn
	user *User
	id   uint64

	out    chan frame    // the bounded send queue
	queued atomic.Int64  // payload bytes in out
	wakeC  chan struct{} // control messages or channels to announce
	done   chan struct{} // closed by close
	once   sync.Once

	sent, dropped atomic.Uint64
	timeSent      int64 // the time last sent, in ns; the writer's

	mu         sync.Mutex
	control    [][]byte            // text messages for the writer
	regVersion uint64              // the registry's version looked at
	shown      map[uint32]bool     // channels looked at: whether advertised
	subs       map[uint32]*channel // the viewer's subscriptions, by id
	pubs       map[uint32]string   // the viewer's channels, by id: topics

	// The connection graph: whether the viewer subscribes to it, whether
	// it is to get it in whole, what it was sent, and of which version.
	graphOn, graphPending         bool
	graphSent                     Graph
	graphVersion, graphRegVersion uint64
}

func newConn(s *Server, ws *websocket.Conn, u *User, id uint64) *conn {
	return &conn{
		s: s, ws: ws, user: u, id: id,
		out:   make(chan frame, s.opts.Queue),
		wakeC: make(chan struct{}, 1),
		done:  make(chan struct{}),
		shown: map[uint32]bool{},
		subs:  map[uint32]*channel{},
		pubs:  map[uint32]string{},
	}
}

// serve runs the connection until it ends: the writer in a goroutine, the
// reader here; then it drops the viewer's subscriptions.
func (c *conn) serve() {
	c.ws.SetReadLimit(int64(c.s.opts.MaxPayload) + 64<<10)
	c.sendJSON(c.serverInfo())
	c.wake()
	written := make(chan struct{})
	go func() {
		defer close(written)
		c.write()
	}()
	c.read()
	c.close()
	<-written
	c.mu.Lock()
	for id, ch := range c.subs {
		ch.unsubscribe(viewSub{c, id})
	}
	c.mu.Unlock()
}

// close ends the connection; the reader and the writer return.
func (c *conn) close() {
	c.once.Do(func() {
		close(c.done)
		c.ws.Close()
	})
}

// wake tells the writer that there is something to send besides messages.
func (c *conn) wake() {
	select {
	case c.wakeC <- struct{}{}:
	default:
	}
}

// offer queues a message for the viewer. When the queue is full it
// drops the oldest queued messages for it, as ROS's KEEP_LAST, so that
// the viewer sees the latest; each drop is counted. It never blocks.
func (c *conn) offer(f frame) {
	n := int64(len(f.payload))
	if n > int64(c.s.opts.QueueBytes) {
		c.dropped.Add(1)
		return
	}
	// A few tries: producers and the writer take from the queue at once.
	for range 4 {
		if c.queued.Load()+n <= int64(c.s.opts.QueueBytes) {
			select {
			case c.out <- f:
				c.queued.Add(n)
				return
			default:
			}
		}
		select {
		case old := <-c.out:
			c.queued.Add(-int64(len(old.payload)))
			c.dropped.Add(1)
		default:
		}
	}
	c.dropped.Add(1)
}

// write sends, until the connection ends, the control messages and new
// advertisements first, then the queued messages.
func (c *conn) write() {
	defer c.close()
	for {
		select {
		case <-c.done:
			return
		case <-c.wakeC:
			if c.flushControl() != nil {
				return
			}
		case f := <-c.out:
			if c.writeBurst(f) != nil {
				return
			}
		}
	}
}

// writeBurst sends the control messages, then f and the messages queued
// behind it, up to burstFrames and about burstBytes, in one write to the
// socket when the connection can be corked.
func (c *conn) writeBurst(f frame) error {
	cc, _ := c.ws.NetConn().(*corkConn)
	if cc != nil {
		cc.cork()
	}
	err := c.flushControl()
	size := 0
	for n := 0; err == nil; n++ {
		c.queued.Add(-int64(len(f.payload)))
		size += len(f.payload)
		if err = c.writeData(f); err != nil || n+1 == burstFrames || size >= burstBytes {
			break
		}
		var more bool
		select {
		case f, more = <-c.out:
		default:
		}
		if !more {
			break
		}
	}
	if cc != nil {
		if ferr := cc.flush(); err == nil {
			err = ferr
		}
	}
	return err
}

// flushControl writes the waiting text messages, the connection graph's
// update, and advertises the channels the viewer has not seen and may
// read.
func (c *conn) flushControl() error {
	c.mu.Lock()
	msgs := c.control
	c.control = nil
	gone, ads := c.syncChannels()
	graph := c.graphUpdate()
	c.mu.Unlock()
	if graph != nil {
		b, err := marshal(graph)
		if err != nil {
			return err
		}
		msgs = append(msgs, b)
	}
	if len(gone) > 0 {
		b, err := marshal(unadvertiseMsg{Op: "unadvertise", ChannelIDs: gone})
		if err != nil {
			return err
		}
		msgs = append(msgs, b)
	}
	if len(ads) > 0 {
		b, err := marshal(advertiseMsg{Op: "advertise", Channels: ads})
		if err != nil {
			return err
		}
		msgs = append(msgs, b)
	}
	for _, m := range msgs {
		if err := c.ws.WriteMessage(websocket.TextMessage, m); err != nil {
			return err
		}
	}
	return c.writeTime()
}

// syncChannels returns the channels the viewer was shown that are gone,
// dropping its subscriptions to them, and advertises those it has not
// seen and may read; c.mu is held.
func (c *conn) syncChannels() (gone []uint32, ads []advertised) {
	v := c.s.reg.version.Load()
	if v == c.regVersion {
		return nil, nil
	}
	c.regVersion = v
	chs := c.s.reg.channels()
	live := make(map[uint32]bool, len(chs))
	for _, ch := range chs {
		live[ch.id] = true
		if _, seen := c.shown[ch.id]; !seen {
			c.shown[ch.id] = matches(c.user.Read, ch.topic)
			if c.shown[ch.id] {
				ads = append(ads, advertisement(ch))
			}
		}
	}
	for id, was := range c.shown {
		if !live[id] {
			delete(c.shown, id)
			if was {
				gone = append(gone, id)
			}
		}
	}
	for id, ch := range c.subs {
		if !live[ch.id] {
			delete(c.subs, id)
			ch.unsubscribe(viewSub{c, id})
		}
	}
	slices.Sort(gone)
	return gone, ads
}

// writeTime sends the server's time when it changed since last sent.
func (c *conn) writeTime() error {
	t := c.s.now.Load()
	if !c.s.opts.Time || t == 0 || t == c.timeSent {
		return nil
	}
	var b [9]byte
	b[0] = opTime
	binary.LittleEndian.PutUint64(b[1:], uint64(t))
	if err := c.ws.WriteMessage(websocket.BinaryMessage, b[:]); err != nil {
		return err
	}
	c.timeSent = t
	return nil
}

// writeData sends a message, unless the viewer unsubscribed meanwhile.
func (c *conn) writeData(f frame) error {
	c.mu.Lock()
	live := c.subs[f.sub] == f.ch
	c.mu.Unlock()
	if !live {
		return nil
	}
	w, err := c.ws.NextWriter(websocket.BinaryMessage)
	if err != nil {
		return err
	}
	var hdr [13]byte
	hdr[0] = opMessageData
	binary.LittleEndian.PutUint32(hdr[1:], f.sub)
	binary.LittleEndian.PutUint64(hdr[5:], f.ts)
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := w.Write(f.payload); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	c.sent.Add(1)
	return nil
}

// read handles the viewer's messages until the connection ends.
func (c *conn) read() {
	for {
		typ, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		switch typ {
		case websocket.TextMessage:
			c.handleOp(data)
		case websocket.BinaryMessage:
			c.handleBinary(data)
		}
	}
}

// sendJSON queues a text message for the writer.
func (c *conn) sendJSON(v any) {
	b, err := marshal(v)
	if err != nil {
		return
	}
	c.mu.Lock()
	if len(c.control) < maxControl {
		c.control = append(c.control, b)
	}
	c.mu.Unlock()
	c.wake()
}
