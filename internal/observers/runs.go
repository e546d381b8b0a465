package observers

import (
	"errors"
	"fmt"
	"io"
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
// histograms. Records are made on the first run of their entity (or by
// Register) and never removed.
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
	// Latency counts the runs by their dispatch latency: from the trigger
	// they served (the message's Received time, the timer's deadline) to
	// their start. A run of a message with no Received time is not
	// counted.
	Latency Histogram
}

// table maps entity IDs, which a wait set hands out densely from 1, to
// records.
type table []atomic.Pointer[Record]

// Runs is the executor.RunObserver that times callback runs. See the
// package documentation. Make one with New; give the executor its Ran
// (Options.Runs) and its Stamp (Options.Stamp).
type Runs struct {
	clk        clock
	origin     int64     // ticks at New: the trace's time zero
	originTime time.Time // the time at New, with its monotonic reading
	trace      *chrometrace.Recorder
	workers    int

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
		workers: opts.Workers,
	}
	r.originTime = time.Now()
	r.origin = r.clk.now()
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
func (r *Runs) Ran(run *executor.Run) {
	rec := r.record(run.Entity)
	dur := run.End - run.Start
	rec.Duration.observe(dur)
	lat := int64(-1)
	if !run.Trigger.IsZero() {
		// The trigger's time on Runs' clock: both readings are
		// monotonic, from the same origin.
		startNs := r.clk.ns(run.Start - r.origin)
		latNs := max(startNs-int64(run.Trigger.Sub(r.originTime)), 0)
		lat = r.clk.ticks(latNs)
		rec.Latency.observe(lat)
	}
	if r.trace != nil && run.Worker < r.workers {
		r.trace.Add(run.Worker, chrometrace.Span{Start: run.Start - r.origin, Dur: dur, Latency: lat, ID: rec.ID})
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

// Register makes the records of cbs ahead of their first runs, so that a
// scrape lists every callback from the start.
func (r *Runs) Register(cbs []executor.Callback) {
	for _, cb := range cbs {
		if s := cb.Subscription; s != nil {
			r.record(&s.Entity)
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
