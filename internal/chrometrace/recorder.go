package chrometrace

import "fmt"

// DefaultLimit is the number of runs a recorder keeps when New is given
// none: 32 MB.
const DefaultLimit = 1_000_000

// chunkSize is the number of spans in a chunk of a track's ring (128 KiB):
// a ring is a list of chunks, so that it needs no single huge allocation.
const chunkSize = 4096

// spansPerPage is the number of spans in a 4 KiB page.
const spansPerPage = 4096 / 32

// Span is one callback run on a worker. Start and Dur are in nanoseconds,
// or in the units of WriteOptions.NsPerUnit, from an origin common to
// every worker; a start before the origin is written as the origin.
type Span struct {
	// Start is when the run started.
	Start int64
	// Dur is how long it ran.
	Dur int64
	// Latency is the time from the run's trigger (a message accepted into
	// its queue, a timer falling due) to its start, in nanoseconds
	// whatever NsPerUnit is; negative when unknown.
	Latency int64
	// ID identifies what ran (the entity); WriteOptions.Describe names it.
	ID uint64
}

// track is one worker's ring of spans: buf, chunks[cur][:off], holds the
// newest.
type track struct {
	chunks  [][]Span
	cur     int    // index of the chunk being filled
	buf     []Span // chunks[cur]
	off     int    // spans in buf
	n       uint64 // spans added
	wrapped bool   // the ring came round: every chunk is full but cur
	_       [64]byte
}

// Recorder keeps the newest spans of each worker. See the package
// documentation for its concurrency contract.
type Recorder struct {
	tracks    []track
	maxChunks int
}

// New returns a recorder for workers workers that keeps the newest limit
// spans (at least 4096 per worker), split evenly among the workers; limit
// 0 means DefaultLimit. It allocates the rings and touches every page of
// them now, 32 bytes a span, as kernel tracers do with their buffers:
// recording then never allocates nor takes a page fault, which in a
// virtual machine costs microseconds (here, page faults on a growing ring
// took 40 ns a run). It panics if workers < 1.
func New(workers, limit int) *Recorder {
	if workers < 1 {
		panic(fmt.Sprintf("chrometrace: %d workers", workers))
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	per := (limit + workers - 1) / workers
	r := &Recorder{
		tracks:    make([]track, workers),
		maxChunks: max(1, (per+chunkSize-1)/chunkSize),
	}
	for i := range r.tracks {
		t := &r.tracks[i]
		t.chunks = make([][]Span, r.maxChunks)
		for c := range t.chunks {
			buf := make([]Span, chunkSize)
			for j := 0; j < len(buf); j += spansPerPage {
				touch(&buf[j])
			}
			t.chunks[c] = buf
		}
		t.buf = t.chunks[0]
	}
	return r
}

// touch writes to s so that its page is mapped. It is not inlined, so that
// the write, of what the memory already holds, is not optimized away.
//
//go:noinline
func touch(s *Span) { *s = Span{} }

// Workers returns the number of tracks.
func (r *Recorder) Workers() int { return len(r.tracks) }

// Add records s on worker w's track, replacing the track's oldest span
// when the track is full. Spans of one worker must be added in the order
// they ran. A w out of range is ignored.
func (r *Recorder) Add(w int, s Span) {
	if uint(w) >= uint(len(r.tracks)) {
		return
	}
	t := &r.tracks[w]
	if t.off == len(t.buf) {
		r.advance(t)
	}
	t.buf[t.off] = s
	t.off++
	t.n++
}

// advance moves t to its next chunk.
func (r *Recorder) advance(t *track) {
	t.cur++
	if t.cur == r.maxChunks {
		t.cur = 0
		t.wrapped = true
	}
	t.buf = t.chunks[t.cur]
	t.off = 0
}

// Len returns the number of spans kept and the number added in all, over
// every worker; the difference was overwritten.
func (r *Recorder) Len() (kept int, added uint64) {
	for i := range r.tracks {
		t := &r.tracks[i]
		kept += t.kept()
		added += t.n
	}
	return kept, added
}

func (t *track) kept() int {
	if t.wrapped {
		return (len(t.chunks)-1)*chunkSize + t.off
	}
	return t.cur*chunkSize + t.off
}

// each calls f with the spans of t, oldest first, one slice per chunk.
func (t *track) each(f func([]Span) error) error {
	if t.wrapped {
		for i := 1; i < len(t.chunks); i++ {
			if err := f(t.chunks[(t.cur+i)%len(t.chunks)]); err != nil {
				return err
			}
		}
	} else {
		for i := 0; i < t.cur; i++ {
			if err := f(t.chunks[i]); err != nil {
				return err
			}
		}
	}
	return f(t.buf[:t.off])
}
