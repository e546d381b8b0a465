package mqtt

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gateConn is a net.Conn whose writes wait for the test, and record how
// they came.
type gateConn struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte
	gate   chan struct{} // a write waits for a receive from it, when not nil
	dls    int           // write deadlines set
}

func (g *gateConn) Write(p []byte) (int, error) {
	if g.gate != nil {
		<-g.gate
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writes = append(g.writes, bytes.Clone(p))
	return len(p), nil
}

func (g *gateConn) SetWriteDeadline(time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dls++
	return nil
}

func (g *gateConn) got() [][]byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([][]byte(nil), g.writes...)
}

// Packets sent while a write is under way go with the next write, in
// order; corked ones wait for uncork; an idle writer writes at once.
func TestWriterCombines(t *testing.T) {
	g := &gateConn{gate: make(chan struct{})}
	w := &writer{conn: g}
	done := make(chan struct{})
	go func() {
		_ = w.send([]byte("a")) // writes, waiting at the gate
		close(done)
	}()
	require.Eventually(t, func() bool {
		w.qmu.Lock()
		defer w.qmu.Unlock()
		return w.writing
	}, time.Second, time.Millisecond)
	require.NoError(t, w.send([]byte("b")))
	w.cork()
	require.NoError(t, w.send([]byte("c")))
	w.uncork() // the write under way takes it
	g.gate <- struct{}{}
	g.gate <- struct{}{}
	<-done
	require.Equal(t, [][]byte{[]byte("a"), []byte("bc")}, g.got())

	g.gate = nil
	w.cork()
	require.NoError(t, w.send([]byte("d")))
	require.NoError(t, w.send([]byte("e")))
	require.Len(t, g.got(), 2, "held while corked")
	w.uncork()
	require.NoError(t, w.send([]byte("f")))
	require.Equal(t, [][]byte{[]byte("a"), []byte("bc"), []byte("de"), []byte("f")}, g.got())
}

// paho.golang's packets go between Lock and Unlock, whole.
func TestWriterPackets(t *testing.T) {
	g := &gateConn{}
	w := &writer{conn: g, packets: true}
	w.Lock()
	_, _ = w.Write([]byte{0x30, 3})
	_, _ = w.Write([]byte("xyz"))
	w.Unlock()
	require.Equal(t, [][]byte{{0x30, 3, 'x', 'y', 'z'}}, g.got())
}

// A large batch is written in chunks, each with its own write deadline:
// a slow link is not given one WriteTimeout for all of it.
func TestWriterChunks(t *testing.T) {
	g := &gateConn{}
	w := &writer{conn: g, wdl: time.Second}
	big := bytes.Repeat([]byte{7}, 2*writeChunk+10)
	w.cork()
	require.NoError(t, w.send(big[:writeChunk]))
	require.NoError(t, w.send(big[writeChunk:]))
	w.uncork()
	got := g.got()
	require.Len(t, got, 3)
	require.Len(t, got[0], writeChunk)
	require.Len(t, got[2], 10)
	require.Equal(t, big, bytes.Join(got, nil))
	g.mu.Lock()
	defer g.mu.Unlock()
	require.Equal(t, 3, g.dls)
}
