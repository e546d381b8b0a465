package refsys

import (
	"encoding/binary"
	"fmt"
)

// The message's layout, as the original's Message4kb and
// TransmissionStats define it.
const (
	// MessageSize is the size of every message on the wire: 8 bytes of
	// Size, HistoryCapacity entries of EntrySize bytes, and 7 int64s of
	// data.
	MessageSize = 8 + HistoryCapacity*EntrySize + 7*8
	// HistoryCapacity is the number of entries a message's history holds.
	HistoryCapacity = 63
	// EntrySize is the size of one history entry on the wire.
	EntrySize = 8 + 4 + 4 + NameLength
	// NameLength is the room for a node's name in an entry, its
	// terminating NUL included: longer names are cut to NameLength-1 bytes.
	NameLength = 48
)

// Entry is one node's mark in a message's history: when the node's
// callback started, its sequence number, and the upstream samples it
// found missing.
type Entry struct {
	// Stamp is the start of the node's callback, in nanoseconds since
	// the Unix epoch on the node's clock.
	Stamp uint64
	// Sequence numbers the node's publications from 0.
	Sequence uint32
	// Dropped counts the gaps the node saw in its inputs' sequences.
	Dropped uint32
	// Node is the node's name, NUL-terminated.
	Node [NameLength]byte
}

// Name returns the entry's node name.
func (e *Entry) Name() string {
	for i, b := range e.Node {
		if b == 0 {
			return string(e.Node[:i])
		}
	}
	return string(e.Node[:])
}

// Message is the reference system's only message type: a 4,096-byte
// record of the path a sample took through the graph (every node it
// passed, once) and the result of the last node's number crunching.
type Message struct {
	// Size is the number of entries of History in use.
	Size uint64
	// History holds the entries, oldest first as the nodes merged them.
	History [HistoryCapacity]Entry
	// Data[0] holds the result of the publishing node's crunch, so that
	// the work cannot be left out; the rest is padding, as in the
	// original.
	Data [7]int64
}

// Entries returns the entries in use.
func (m *Message) Entries() []Entry { return m.History[:m.Size] }

// Add appends the entry of node, as a node does before it publishes; a
// full history takes no more entries.
func (m *Message) Add(node string, seq, dropped uint32, stamp uint64) {
	if m.Size >= HistoryCapacity {
		return
	}
	e := &m.History[m.Size]
	m.Size++
	*e = Entry{Stamp: stamp, Sequence: seq, Dropped: dropped}
	copy(e.Node[:NameLength-1], node)
}

// Merge appends the entries of src whose node has none in m yet, in
// src's order, as far as the history has room: a node's first entry is
// the one kept.
func (m *Message) Merge(src *Message) {
	for _, e := range src.Entries() {
		if m.Size >= HistoryCapacity {
			return
		}
		if !m.has(&e) {
			m.History[m.Size] = e
			m.Size++
		}
	}
}

func (m *Message) has(e *Entry) bool {
	for i := range m.Size {
		if m.History[i].Node == e.Node {
			return true
		}
	}
	return false
}

// Sequence returns the sequence number of the last entry, the one of the
// node that published m; 0 for an empty history.
func (m *Message) Sequence() uint32 {
	if m.Size == 0 {
		return 0
	}
	return m.History[m.Size-1].Sequence
}

// missed returns the samples of an input that a node missed before m,
// given the sequence number of the input's previous message at *last,
// and records m's there. A sequence that does not move forward (the
// publisher restarted) counts none.
func missed(m *Message, last *uint32) uint32 {
	seq := m.Sequence()
	var n uint32
	if seq > *last {
		n = seq - *last - 1
	}
	*last = seq
	return n
}

// MarshalBinary returns m's wire form: MessageSize bytes, little-endian.
func (m *Message) MarshalBinary() ([]byte, error) {
	b := make([]byte, MessageSize)
	le := binary.LittleEndian
	le.PutUint64(b, m.Size)
	for i := range m.History {
		e, at := &m.History[i], b[8+i*EntrySize:]
		le.PutUint64(at, e.Stamp)
		le.PutUint32(at[8:], e.Sequence)
		le.PutUint32(at[12:], e.Dropped)
		copy(at[16:16+NameLength], e.Node[:])
	}
	for i, d := range m.Data {
		le.PutUint64(b[8+HistoryCapacity*EntrySize+i*8:], uint64(d))
	}
	return b, nil
}

// UnmarshalBinary reads m from its wire form; it rejects a payload of
// another size or a history larger than HistoryCapacity.
func (m *Message) UnmarshalBinary(b []byte) error {
	if len(b) != MessageSize {
		return fmt.Errorf("refsys: a message has %d bytes, not %d", MessageSize, len(b))
	}
	le := binary.LittleEndian
	size := le.Uint64(b)
	if size > HistoryCapacity {
		return fmt.Errorf("refsys: a message's history holds at most %d entries, not %d", HistoryCapacity, size)
	}
	m.Size = size
	for i := range m.History {
		e, at := &m.History[i], b[8+i*EntrySize:]
		e.Stamp = le.Uint64(at)
		e.Sequence = le.Uint32(at[8:])
		e.Dropped = le.Uint32(at[12:])
		copy(e.Node[:], at[16:16+NameLength])
	}
	for i := range m.Data {
		m.Data[i] = int64(le.Uint64(b[8+HistoryCapacity*EntrySize+i*8:]))
	}
	return nil
}
