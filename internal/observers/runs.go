package observers

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/chrometrace"
	"github.com/robotexec/robotexec/waitset"
)

// Options configure Runs.
type Options struct {
	// Workers is the number of the executor's workers (after its
	// defaults: executor.Executor.Workers); runs on workers beyond it are
	// not recorded, neither in the histograms nor in the trace. It must be at least 1.
	Workers int
	// Trace, if not nil, receives every run. Its number of workers must
	// be at least Workers.
	Trace *chrometrace.Recorder
	// MonotonicClock makes Runs read Go's monotonic clock even where the
	// time-stamp counter is trusted, for measurements.
	MonotonicClock bool
}

// Record is what Runs keeps about one callback: its names and its
// histograms. Records are made on the first run of their entity (or by
// Register) and never removed.
type Record struct {
	// ID is the entity's ID in its wait set.
	ID uint64
	// Node and Callback are the owner's and the callback's names
	// (executor.Callback), or "" and "entity ID" for a run before
	// Register or of a callback the executor no longer has.
	Node, Callback string
	// Kind is what the entity is.
	Kind waitset.Kind

	ticks *scale // the duration's: the clock's
	// shards holds each worker's share of the histograms, made on the
	// worker's first run of the entity. An entity moves from worker to
	// worker; were its histograms one, their cache lines would move with
	// it, a miss or two on every run.
	shards []atomic.Pointer[shard]
}

// shard is one worker's share of a record's histograms.
type shard struct {
	duration histogram // in ticks
	latency  histogram // in nanoseconds
	_        [64]byte  // off the next object's cache line
}

// Duration counts the runs by how long the callback ran.
func (r *Record) Duration() HistogramSnapshot {
	var s HistogramSnapshot
	for i := range r.shards {
		if sh := r.shards[i].Load(); sh != nil {
			sh.duration.addTo(&s, r.ticks)
		}
	}
	return s
}

// Latency counts the runs by their dispatch latency: from the trigger
// they served (the message's Received time, the timer's deadline) to
// their start. A run of a message with no Received time is not counted.
func (r *Record) Latency() HistogramSnapshot {
	var s HistogramSnapshot
	for i := range r.shards {
		if sh := r.shards[i].Load(); sh != nil {
			sh.latency.addTo(&s, &nanoseconds)
		}
	}
	return s
}

// local is what one worker's runs touch in Runs, which no other worker's
// runs write: a worker's shards by entity ID, for one lookup per run.
type local struct {
	shards []*shard
	_      [64]byte
}

// shard returns worker w's shard, making it on w's first run. Only w
// calls it with w, so the shard has one writer.
func (r *Record) shard(w int) *shard {
	if sh := r.shards[w].Load(); sh != nil {
		return sh
	}
	sh := new(shard)
	r.shards[w].Store(sh)
	return sh
}

// table maps entity IDs, which a wait set hands out densely from 1, to
// records.
type table []atomic.Pointer[Record]

// Runs is the executor.RunObserver that times callback runs. See the
// package documentation. Make one with New; give the executor its Ran
// (Options.Runs) and its Stamp (Options.Stamp).
type Runs struct {
	_          [64]byte // read on every run: off the cache lines of others' writes
	clk        clock
	origin     int64     // ticks at New: the trace's time zero
	originTime time.Time // the time at New, with its monotonic reading
	trace      *chrometrace.Recorder
	workers    int
	perWorker  []local // by worker
	// anchor pins the clock to the monotonic one, for latencies; it
	// moves on when a run starts anchorTicks after it.
	anchor      atomic.Pointer[anchor]
	anchorTicks int64

	tab atomic.Pointer[table]

	mu   sync.Mutex // guards recs, ex and the growth of tab
	recs []*Record
	ex   *executor.Executor // Register's: names the callbacks of new records
	_    [64]byte
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
		clk:       newClock(opts.MonotonicClock),
		trace:     opts.Trace,
		workers:   opts.Workers,
		perWorker: make([]local, opts.Workers),
	}
	r.originTime = time.Now()
	r.origin = r.clk.now()
	r.anchor.Store(&anchor{ticks: r.origin, nsPerTick: r.clk.nsPerTick})
	r.anchorTicks = math.MaxInt64 // the monotonic clock is its own anchor
	if !r.clk.exact {
		r.anchorTicks = int64(float64(anchorEvery) / r.clk.nsPerTick)
		if t, ns, ok := r.clk.readPair(r.originTime); ok {
			r.anchor.Store(&anchor{ticks: t, ns: ns, nsPerTick: r.clk.nsPerTick})
		}
	}
	t := make(table, 64)
	r.tab.Store(&t)
	return r
}

// Clock names the clock Runs reads: "tsc" or "monotonic".
func (r *Runs) Clock() string { return r.clk.source() }

// Stamp reads Runs' clock, in ticks: the executor's Options.Stamp.
func (r *Runs) Stamp() int64 { return r.clk.now() }

// Ran records a run: its duration, its dispatch latency and, with a trace,
// its span. It is the executor's Options.Runs.
func (r *Runs) Ran(run executor.Run) {
	if uint(run.Worker) >= uint(r.workers) {
		return
	}
	l := &r.perWorker[run.Worker]
	id := run.ID
	var sh *shard
	if id < uint64(len(l.shards)) {
		sh = l.shards[id]
	}
	if sh == nil {
		sh = r.newShard(l, run)
	}
	dur := run.End - run.Start
	sh.duration.observe(&r.clk.scale, dur)
	lat := int64(-1)
	if !run.Trigger.IsZero() {
		// In nanoseconds of the monotonic clock, which the trigger's
		// time was read on, both from originTime.
		a := r.anchor.Load()
		if run.Start-a.ticks > r.anchorTicks {
			a = r.reanchor(a)
		}
		lat = max(a.at(run.Start)-int64(run.Trigger.Sub(r.originTime)), 0)
		sh.latency.observe(&nanoseconds, lat)
	}
	if r.trace != nil {
		r.trace.Add(run.Worker, chrometrace.Span{Start: run.Start - r.origin, Dur: dur, Latency: lat, ID: id})
	}
}

// reanchor moves the anchor on from a, unless another worker did it
// first, and returns the newest.
func (r *Runs) reanchor(a *anchor) *anchor {
	if t, ns, ok := r.clk.readPair(r.originTime); ok {
		if b := a.next(t, ns, r.clk.nsPerTick); r.anchor.CompareAndSwap(a, b) {
			return b
		}
	}
	return r.anchor.Load()
}

// newShard makes the shard of run's worker for run's entity, and its
// record if need be, and enters it in l, the worker's table.
func (r *Runs) newShard(l *local, run executor.Run) *shard {
	id := run.ID
	sh := r.record(id, nil).shard(run.Worker)
	if id >= uint64(len(l.shards)) {
		l.shards = slices.Grow(l.shards, int(id)+1-len(l.shards))[:max(int(id)+1, cap(l.shards))]
	}
	l.shards[id] = sh
	return sh
}

// record returns the record of callback id, making it on the callback's
// first run; cb describes the callback, or is nil for the executor to.
func (r *Runs) record(id uint64, cb *executor.Callback) *Record {
	t := *r.tab.Load()
	if id < uint64(len(t)) {
		if rec := t[id].Load(); rec != nil {
			return rec
		}
	}
	return r.makeRecord(id, cb)
}

func (r *Runs) makeRecord(id uint64, cb *executor.Callback) *Record {
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
	rec := &Record{ID: id, ticks: &r.clk.scale, shards: make([]atomic.Pointer[shard], r.workers)}
	if cb == nil && r.ex != nil {
		if c, ok := r.ex.Callback(id); ok {
			cb = &c
		}
	}
	if cb != nil {
		rec.Node, rec.Callback, rec.Kind = cb.Owner, cb.Name, waitset.Subscription
		if cb.Timer != nil {
			rec.Kind = waitset.Timer
		}
	} else {
		rec.Callback = fmt.Sprintf("entity %d", id)
	}
	t[id].Store(rec)
	r.recs = append(r.recs, rec)
	return rec
}

// Register makes the records of ex's callbacks ahead of their first runs,
// so that a scrape lists every callback from the start, and names those
// registered later on their first runs: such a first run asks the
// executor (Executor.Callback, under its registration lock), once.
func (r *Runs) Register(ex *executor.Executor) {
	r.mu.Lock()
	r.ex = ex
	r.mu.Unlock()
	for _, cb := range ex.Callbacks() {
		r.record(cb.ID, &cb)
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
