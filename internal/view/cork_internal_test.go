package view

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCorkConn: writes to a corked connection are held back and leave in
// one write at flush; uncorked, a write goes straight through.
func TestCorkConn(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	c := &corkConn{Conn: a}
	defer c.Close()
	got := make(chan []byte, 4)
	go func() {
		buf := make([]byte, 64)
		for {
			n, err := b.Read(buf)
			if err != nil {
				close(got)
				return
			}
			got <- append([]byte(nil), buf[:n]...)
		}
	}()

	c.cork()
	for _, s := range []string{"one ", "two ", "three"} {
		n, err := c.Write([]byte(s))
		require.NoError(t, err)
		require.Equal(t, len(s), n)
	}
	select {
	case p := <-got:
		t.Fatalf("%q was written while corked", p)
	case <-time.After(20 * time.Millisecond):
	}
	require.NoError(t, c.flush())
	require.Equal(t, "one two three", string(<-got), "one write at flush")

	_, err := c.Write([]byte("straight"))
	require.NoError(t, err)
	require.Equal(t, "straight", string(<-got))
	require.NoError(t, c.flush(), "nothing held")

	a.Close()
	c.cork()
	_, _ = c.Write([]byte("lost"))
	require.ErrorIs(t, c.flush(), io.ErrClosedPipe, "flush reports the write's error")
}
