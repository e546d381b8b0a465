package observers

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/chrometrace"
	"github.com/robotexec/robotexec/waitset"
)

// Options configure Runs.
type Options struct {
	// Workers is the number of the executor's workers (after its
	// defaults: executor.Executor.Workers); runs on workers beyond it are
	// not recorded. It must be at least 1.
	Workers int
	// Trace, if not nil, receives every run. Its number of workers must
	// be at least Workers.
	Trace *chrometrace.Recorder
	// MonotonicClock makes Runs read Go's monotonic clock even where the
	// time-stamp counter is trusted, for measurements.
	MonotonicClock bool
}

// Record is what Runs keeps about one callback: its names and its
// histograms. Records are made on the first event of their entity and
// never removed.
type Record struct {
	// ID is the entity's ID in its wait set.
	ID uint64
	// Node and Callback are the owner's and the callback's names
	// (executor.CallbackOf), or "" and "entity ID" for an entity that is
	// not an executor's.
	Node, Callback string
	// Kind is what the entity is.
	Kind waitset.Kind
	// Duration counts the runs by how long the callback ran.
	Duration Histogram
	// Latency counts the runs by their dispatch latency: from the
	// acceptance of the message they run into the subscription's queue,
	// or from the timer being triggered, to their start. A run whose
	// trigger was not seen (a run with no message, a stamp overwritten)
	// is not counted.
	Latency Histogram

	depth  atomic.Int64 // the subscription's queue depth, if known
	stamps atomic.Pointer[stampRing]
	ready  atomic.Int64 // timers: ticks when last made ready
	// lastStart is the tick of a timer's last run's start. Only the
	// worker that runs the entity touches it, and the executor orders
	// its runs.
	lastStart int64
}

// worker is the state of a run in progress on one worker, on a cache line
// of its own.
type worker struct {
	rec   *Record
	start int64 // ticks
	lat   int64 // ticks, or -1
	_     [40]byte
}

// table maps entity IDs, which a wait set hands out densely from 1, to
// records.
type table []atomic.Pointer[Record]

// Runs is the waitset.Observer that times callback runs. See the package
// documentation. Make one with New.
type Runs struct {
	clk     clock
	origin  int64 // ticks at New: the trace's time zero
	trace   *chrometrace.Recorder
	workers []worker

	tab atomic.Pointer[table]

	mu   sync.Mutex // guards recs and the growth of tab
	recs []*Record
}

// New returns a Runs observer. It panics if opts.Workers < 1 or the trace
// has fewer workers.
func New(opts Options) *Runs {
	if opts.Workers < 1 {
		panic(fmt.Sprintf("observers: %d workers", opts.Workers))
	}
	if opts.Trace != nil && opts.Trace.Workers() < opts.Workers {
		panic(fmt.Sprintf("observers: a trace of %d workers for %d", opts.Trace.Workers(), opts.Workers))
	}
	r := &Runs{
		clk:     newClock(opts.MonotonicClock),
		trace:   opts.Trace,
		workers: make([]worker, opts.Workers),
	}
	r.origin = r.clk.now()
	t := make(table, 64)
	r.tab.Store(&t)
	return r
}

// Clock names the clock Runs reads: "tsc" or "monotonic".
func (r *Runs) Clock() string { return r.clk.source() }

// Observe records ev. It reads the clock for Accept, for the Ready of a
// timer, for Start and for Finish, and ignores the other steps.
func (r *Runs) Observe(ev waitset.Event) {
	switch ev.Op {
	case waitset.Start:
		r.start(ev)
	case waitset.Finish:
		r.finish(ev)
	case waitset.Accept:
		r.record(ev.Entity).stamp(ev.Seq, r.clk.now()-r.origin)
	case waitset.Ready:
		if ev.Entity.Kind() == waitset.Timer {
			r.record(ev.Entity).ready.Store(r.clk.now())
		}
	}
}

func (r *Runs) start(ev waitset.Event) {
	t := r.clk.now()
	if uint(ev.Worker) >= uint(len(r.workers)) {
		return
	}
	w := &r.workers[ev.Worker]
	rec := r.record(ev.Entity)
	lat := int64(-1)
	if ev.Entity.Kind() == waitset.Timer {
		// A trigger before the previous run's start is not this run's:
		// this run's Ready, observed just after the entity was pushed,
		// has not been seen yet.
		if rd := rec.ready.Load(); rd > rec.lastStart {
			lat = max(t-rd, 0)
		}
		rec.lastStart = t
	} else {
		lat = rec.latency(ev.Seq, t-r.origin)
	}
	w.rec, w.start, w.lat = rec, t, lat
}

func (r *Runs) finish(ev waitset.Event) {
	t := r.clk.now()
	if uint(ev.Worker) >= uint(len(r.workers)) {
		return
	}
	w := &r.workers[ev.Worker]
	rec := w.rec
	if rec == nil || rec.ID != ev.Entity.ID() {
		return // no Start seen for this run
	}
	w.rec = nil
	dur := t - w.start
	rec.Duration.observe(dur)
	if w.lat >= 0 {
		rec.Latency.observe(w.lat)
	}
	if r.trace != nil {
		r.trace.Add(ev.Worker, chrometrace.Span{Start: w.start - r.origin, Dur: dur, Latency: w.lat, ID: rec.ID})
	}
}

// record returns x's record, making it on x's first event.
func (r *Runs) record(x *waitset.Entity) *Record {
	t := *r.tab.Load()
	if id := x.ID(); id < uint64(len(t)) {
		if rec := t[id].Load(); rec != nil {
			return rec
		}
	}
	return r.makeRecord(x)
}

func (r *Runs) makeRecord(x *waitset.Entity) *Record {
	id := x.ID()
	r.mu.Lock()
	defer r.mu.Unlock()
	t := *r.tab.Load()
	if id < uint64(len(t)) {
		if rec := t[id].Load(); rec != nil {
			return rec
		}
	} else {
		grown := make(table, max(2*len(t), int(id)+1))
		for i := range t {
			grown[i].Store(t[i].Load())
		}
		r.tab.Store(&grown)
		t = grown
	}
	rec := &Record{ID: id, Kind: x.Kind()}
	rec.Duration.sc = &r.clk.scale
	rec.Latency.sc = &r.clk.scale
	if node, cb, ok := executor.CallbackOf(x); ok {
		rec.Node, rec.Callback = node, cb
	} else {
		rec.Callback = fmt.Sprintf("entity %d", id)
	}
	t[id].Store(rec)
	r.recs = append(r.recs, rec)
	return rec
}

// Register makes the records of cbs ahead of their first events, with
// their subscriptions' queue depths, so that every message's stamp is
// kept until its run starts however deep the queue. Callbacks registered
// later, or not at all, get records on their first event, with room for
// the stamps of 256 queued messages.
func (r *Runs) Register(cbs []executor.Callback) {
	for _, cb := range cbs {
		if s := cb.Subscription; s != nil {
			r.record(&s.Entity).depth.Store(int64(s.Options().Depth))
		} else if cb.Timer != nil {
			r.record(&cb.Timer.Entity)
		}
	}
}

// Records returns every record, in the order they were made.
func (r *Runs) Records() []*Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Record(nil), r.recs...)
}

// Lookup returns the record of the entity with the given ID, or nil.
func (r *Runs) Lookup(id uint64) *Record {
	if t := *r.tab.Load(); id < uint64(len(t)) {
		return t[id].Load()
	}
	return nil
}

// WriteTrace writes the trace recorder's runs to w (see
// chrometrace.Recorder.WriteTo), naming their callbacks and converting
// their ticks; opts' Describe and NsPerUnit are set here. It must not run
// concurrently with Observe: call it once the executor has stopped. It
// returns an error if Runs has no trace.
func (r *Runs) WriteTrace(w io.Writer, opts chrometrace.WriteOptions) (int64, error) {
	if r.trace == nil {
		return 0, errors.New("observers: no trace recorder")
	}
	opts.Describe = r.Describe
	opts.NsPerUnit = r.clk.nsPerTick
	return r.trace.WriteTo(w, opts)
}

// Describe names the entity of a trace span, for chrometrace.WriteOptions.
func (r *Runs) Describe(id uint64) chrometrace.Entity {
	rec := r.Lookup(id)
	if rec == nil {
		return chrometrace.Entity{Callback: fmt.Sprintf("entity %d", id)}
	}
	return chrometrace.Entity{Node: rec.Node, Callback: rec.Callback, Kind: rec.Kind.String()}
}

// defaultStamps is the number of message stamps kept for a subscription
// whose queue depth is unknown.
const defaultStamps = 256

// A stamp is one word: the low 16 bits of a message's sequence number
// (its tag) over the low 48 bits of the tick it was accepted at, counted
// from the origin (a day at 3 GHz; latencies are computed modulo 2^48).
const (
	stampBits = 48
	stampMask = 1<<stampBits - 1
)

// stampRing holds the acceptance times of a subscription's latest
// messages, indexed by sequence number. A queue of depth d holds messages
// seq+1 … seq+d at most while message seq waits to start, so a ring of
// more than d slots keeps a message's stamp until its run started; the
// tags tell when it did not (a queue deeper than the ring: an unknown
// depth, or Offer's growth beyond it).
//
// Accept is observed under the subscription's lock, so stamps have one
// writer at a time, in sequence order, and a run's Start follows its
// Take under the same lock: the slot read at Start happens after the
// write it looks for. Only in a ring that is too small may a newer write
// race with that read; it is a single word, so the read sees one stamp
// or the other, whole, and the tag tells which.
type stampRing struct {
	mask  uint64
	slots []uint64
}

// stamp records that message seq was accepted at tick t (from the origin).
func (rec *Record) stamp(seq uint64, t int64) {
	ring := rec.stamps.Load()
	if ring == nil {
		n := uint64(defaultStamps)
		if d := rec.depth.Load(); d > 0 {
			n = uint64(1) << bits.Len64(uint64(d)) // > d
		}
		ring = &stampRing{mask: n - 1, slots: make([]uint64, n)}
		rec.stamps.Store(ring)
	}
	ring.slots[seq&ring.mask] = seq<<stampBits | uint64(t)&stampMask
}

// latency returns the ticks from message seq's acceptance to t (from the
// origin), or -1 if its stamp is gone.
func (rec *Record) latency(seq uint64, t int64) int64 {
	ring := rec.stamps.Load()
	if ring == nil || seq == 0 {
		return -1
	}
	w := ring.load(seq & ring.mask)
	if w>>stampBits != seq&(1<<(64-stampBits)-1) {
		return -1
	}
	d := (uint64(t) - w) & stampMask
	if d > stampMask/2 {
		return 0 // accepted "after" the start: counters a hair apart
	}
	return int64(d)
}

// load reads a slot; see stampRing for why it may race with stamp.
//
//go:norace
func (r *stampRing) load(i uint64) uint64 { return r.slots[i] }
