package broker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// fakeListener hands out what is sent on accepts, a connection or an
// error, until it is closed.
type fakeListener struct {
	accepts chan any
	once    sync.Once
	closed  chan struct{}
}

func newFakeListener(queued ...any) *fakeListener {
	f := &fakeListener{accepts: make(chan any, 16), closed: make(chan struct{})}
	for _, q := range queued {
		f.accepts <- q
	}
	return f
}

func (f *fakeListener) Accept() (net.Conn, error) {
	select {
	case a := <-f.accepts:
		if err, ok := a.(error); ok {
			return nil, err
		}
		return a.(net.Conn), nil
	case <-f.closed:
		return nil, net.ErrClosed
	}
}

func (f *fakeListener) Close() error   { f.once.Do(func() { close(f.closed) }); return nil }
func (f *fakeListener) Addr() net.Addr { return &net.TCPAddr{} }

// The listener keeps accepting after errors that pass (out of file
// descriptors, a peer that gave up), hands a connection over once its
// CONNECT arrived, to be read again, and stops on other errors.
func TestListenerAccept(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	fake := newFakeListener(
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept", syscall.EMFILE)},
		fmt.Errorf("wrapped: %w", syscall.ECONNABORTED),
		a)
	l := newListener(fake, Config{MaxConnections: 10, MaxPacketSize: 1024}, &counters{}, slog.New(slog.DiscardHandler))
	defer l.shutdown(context.Background())
	// A CONNECT's fixed header and body, then the start of a packet.
	sent := []byte{0x10, 2, 0xaa, 0xbb, 0xc0}
	wrote := make(chan error, 1)
	go func() { _, err := b.Write(sent); wrote <- err }()
	c, err := l.Accept()
	require.NoError(t, err)
	require.NoError(t, <-wrote)
	require.Equal(t, 1, l.open())
	got, err := io.ReadAll(io.LimitReader(c, int64(len(sent))))
	require.NoError(t, err)
	require.Equal(t, sent, got)
	require.NoError(t, c.Close())
	require.Zero(t, l.open())

	fake.accepts <- errors.New("fatal")
	_, err = l.Accept()
	require.EqualError(t, err, "fatal")
}

// Once the listener is closed, a connection it accepts is closed.
func TestListenerTrackAfterClose(t *testing.T) {
	l := newListener(newFakeListener(), Config{MaxConnections: 10, MaxPacketSize: 1024}, &counters{}, slog.New(slog.DiscardHandler))
	l.shutdown(context.Background())
	a, b := net.Pipe()
	defer b.Close()
	require.Nil(t, l.track(a))
	_, err := a.Write([]byte("x"))
	require.ErrorIs(t, err, io.ErrClosedPipe)
	require.Zero(t, l.open())
}

// readFirst reads a CONNECT of at most the limit, whatever the reads'
// sizes, and refuses anything else as soon as its header says so.
func TestReadFirst(t *testing.T) {
	connect := func(size int) []byte { // a CONNECT of size bytes in all
		var p []byte
		switch {
		case size-2 < 128:
			p = []byte{0x10, byte(size - 2)}
		case size-3 < 16384:
			p = []byte{0x10, byte((size-3)%128) | 128, byte((size - 3) / 128)}
		default:
			panic("size")
		}
		return append(p, make([]byte, size-len(p))...)
	}
	for _, tc := range []struct {
		name  string
		in    []byte
		limit int
		want  error // nil: the first packet comes back, maybe with more
	}{
		{"empty CONNECT", []byte{0x10, 0}, 64, nil},
		{"CONNECT and more", append(connect(40), 0x30, 0), 64, nil},
		{"at the limit", connect(10000), 10000, nil},
		{"over the limit", connect(10001), 10000, errFirstTooLarge},
		{"claim only", []byte{0x10, 0xff, 0xff, 0xff, 0x7f}, 65536, errFirstTooLarge},
		{"not CONNECT", []byte{0x30, 0}, 64, errFirstNotConnect},
		{"five length bytes", []byte{0x10, 0x80, 0x80, 0x80, 0x80, 0x01}, 1 << 30, errMalformedLength},
		{"cut short", connect(300)[:299], 1000, io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []io.Reader{bytes.NewReader(tc.in), iotest.OneByteReader(bytes.NewReader(tc.in))} {
				got, err := readFirst(eofUnexpected{r}, make([]byte, 0, firstBuffer), tc.limit)
				if tc.want != nil {
					require.ErrorIs(t, err, tc.want)
					continue
				}
				require.NoError(t, err)
				size, _ := packetSize(tc.in)
				require.GreaterOrEqual(t, len(got), size, "the whole packet")
				require.Equal(t, tc.in[:len(got)], got)
				require.LessOrEqual(t, cap(got), max(firstBuffer, tc.limit))
			}
		})
	}
}

// eofUnexpected reports the end of its reader as io.ErrUnexpectedEOF, as
// a connection closed mid-packet is to the gate.
type eofUnexpected struct{ r io.Reader }

func (e eofUnexpected) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// Whatever a client sends first, readFirst's buffer grows no larger than
// the limit, and what it returns starts with a whole CONNECT.
func FuzzReadFirst(f *testing.F) {
	f.Add([]byte{0x10, 0})
	f.Add([]byte{0x10, 0x80, 0x02, 1, 2, 3})
	f.Add([]byte{0x10, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, in []byte) {
		const limit = 1000
		got, err := readFirst(bytes.NewReader(in), make([]byte, 0, 16), limit)
		if err != nil {
			return
		}
		size, err := packetSize(got)
		if err != nil || size == 0 || size > len(got) || size > limit || got[0]>>4 != 1 {
			t.Fatalf("returned %x: size %d, %v", got, size, err)
		}
		if cap(got) > limit {
			t.Fatalf("buffer of %d bytes for a limit of %d", cap(got), limit)
		}
	})
}
