package mqtt

import (
	"net"
	"sync"
	"time"
)

// writer is the write side of a frameConn. It writes what several
// goroutines send at once, in one system call: a packet given while
// another goroutine is in the middle of writing waits for it, and goes
// with the others given meanwhile when that write returns (no goroutine
// of its own, so an idle connection's packet goes at once). A goroutine
// with several packets to send corks the writer (cork, uncork): they then
// go together. Writing the packets of a burst of messages and their
// acknowledgements a system call each was a third of the client's CPU.
//
// paho.golang locks the connection (sync.Locker) around the writes of
// each packet; the packet goes when it unlocks. paho.mqtt.golang writes
// each packet in one Write.
type writer struct {
	conn    net.Conn
	wdl     time.Duration // write deadline of each write
	packets bool          // paho.golang's: Write gathers between Lock and Unlock

	pmu sync.Mutex // one packet at a time (Lock, Unlock)
	cur []byte     // the packet between Lock and Unlock

	qmu     sync.Mutex // guards what follows
	pending []byte     // packets not yet written, in order
	spare   []byte
	writing bool  // a goroutine is writing
	corks   int   // while positive, pending waits
	err     error // the first write error: the connection is closed
}

// Lock starts a packet: paho.golang's writes until Unlock are gathered.
func (w *writer) Lock() { w.pmu.Lock() }

// Unlock sends the gathered packet.
func (w *writer) Unlock() {
	w.qmu.Lock()
	w.pending = append(w.pending, w.cur...)
	w.qmu.Unlock()
	if cap(w.cur) > 4*readBuffer {
		w.cur = nil
	} else {
		w.cur = w.cur[:0]
	}
	w.pmu.Unlock()
	w.flush()
}

// Write gathers p into the packet between Lock and Unlock (MQTT 5), or,
// outside them, sends p, a whole packet (MQTT 3.1.1). It reports an error
// once a write has failed.
func (w *writer) Write(p []byte) (int, error) {
	if err := w.failed(); err != nil {
		return 0, err
	}
	if w.packets {
		// Between Lock and Unlock, which paho.golang holds.
		w.cur = append(w.cur, p...)
		return len(p), nil
	}
	if err := w.send(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// send sends p, a whole packet of the client's own.
func (w *writer) send(p []byte) error {
	w.qmu.Lock()
	w.pending = append(w.pending, p...)
	w.qmu.Unlock()
	w.flush()
	return w.failed()
}

func (w *writer) failed() error {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	return w.err
}

// cork holds the packets sent from now on until uncork.
func (w *writer) cork() {
	w.qmu.Lock()
	w.corks++
	w.qmu.Unlock()
}

// uncork writes what cork held.
func (w *writer) uncork() {
	w.qmu.Lock()
	w.corks--
	w.qmu.Unlock()
	w.flush()
}

// flush writes the pending packets unless another goroutine is writing
// (it writes them when its write returns) or the writer is corked.
func (w *writer) flush() {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	if w.writing {
		return
	}
	w.writing = true
	for len(w.pending) > 0 && w.corks == 0 && w.err == nil {
		b := w.pending
		w.pending = w.spare[:0]
		w.qmu.Unlock()
		err := w.write(b)
		w.qmu.Lock()
		w.spare = b[:0]
		if err != nil {
			w.err = err
			// The reader then ends, and the connection with it.
			_ = w.conn.Close()
		}
	}
	w.writing = false
	if cap(w.spare) > 16*readBuffer {
		w.spare = nil
	}
}

// writeChunk is the most written under one write deadline: a large
// batch on a slow link is not one write that must end in WriteTimeout.
const writeChunk = 256 << 10

// write writes b, each writeChunk within the write deadline.
func (w *writer) write(b []byte) error {
	for len(b) > 0 {
		n := min(len(b), writeChunk)
		if w.wdl > 0 {
			_ = w.conn.SetWriteDeadline(time.Now().Add(w.wdl))
		}
		if _, err := w.conn.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
