package bench

import (
	"encoding/binary"
	"math"
	"sync"
)

// pipeMarker is the sequence number of the message that ends a round of
// PipelineViaBroker.
const pipeMarker = math.MaxUint64

// maxPipeSeq bounds the sequence numbers a tally accepts, so that a stray
// payload cannot make it allocate.
const maxPipeSeq = 1 << 24

// seqPayload returns the payload of the pipeline message numbered seq.
func seqPayload(seq uint64) []byte {
	return binary.LittleEndian.AppendUint64(make([]byte, 0, 8), seq)
}

// isMarker reports whether p is the end marker's payload.
func isMarker(p []byte) bool { return len(p) == 8 && binary.LittleEndian.Uint64(p) == pipeMarker }

// tally counts the pipeline messages one receiver got, by sequence
// number, and says when it has every one of them and when the end marker
// came. It is safe for concurrent use.
type tally struct {
	mu     sync.Mutex
	seen   []bool
	got    int // distinct messages
	dups   int // messages got again
	stray  int // payloads that are no pipeline message
	want   int // -1 until known
	all    chan struct{}
	hasAll bool
	end    chan struct{}
	ended  bool
}

func newTally() *tally {
	return &tally{want: -1, all: make(chan struct{}), end: make(chan struct{})}
}

// add counts the message with payload p.
func (t *tally) add(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(p) != 8 {
		t.stray++
		return
	}
	switch seq := binary.LittleEndian.Uint64(p); {
	case seq == pipeMarker:
		if !t.ended {
			t.ended = true
			close(t.end)
		}
	case seq >= maxPipeSeq:
		t.stray++
	default:
		if n := int(seq) + 1; n > len(t.seen) {
			t.seen = append(t.seen, make([]bool, n-len(t.seen))...)
		}
		if t.seen[seq] {
			t.dups++
			return
		}
		t.seen[seq] = true
		t.got++
		t.check()
	}
}

// expect says that the pipeline messages are numbered 0 to n-1.
func (t *tally) expect(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.want = n
	t.check()
}

func (t *tally) check() {
	if !t.hasAll && t.want >= 0 && t.got >= t.want {
		t.hasAll = true
		close(t.all)
	}
}

// counts returns the distinct messages got, those got more than once, and
// the stray payloads.
func (t *tally) counts() (got, dups, stray int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.got, t.dups, t.stray
}
