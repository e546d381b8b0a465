// Package observers holds the executor observers of robotexec's wiring.
//
// [Runs] is a waitset.Observer that times every callback run: it keeps, per
// callback, histograms of the run's duration and of its dispatch latency
// (trigger → start: from a message's acceptance into its subscription's
// queue, or from a timer falling due), and hands each run to a
// chrometrace.Recorder for the timeline.
//
// # Cost
//
// Runs sits on the executor's dispatch path, so it is built for it: one
// clock read per step that needs one (a message accepted, a timer made
// ready, a run's start and end) and none for the others; the clock is the
// CPU's time-stamp counter where the kernel trusts it (amd64 Linux with
// the tsc clock source: ~10 ns a read here, against ~26 ns for the
// monotonic clock, which is the fallback); per-worker state on cache lines
// of its own; no lock, no atomic read-modify-write, and no atomic store (an
// XCHG on amd64, ~20 cycles) on the path of a message or a run (a timer's
// trigger makes one). A callback's histograms have a single writer,
// because an entity never runs concurrently with itself and the executor
// orders its runs, so a histogram update is plain loads and stores; a
// scrape reads the words without synchronization (see Histogram). A
// message's acceptance stamp is one plain word written under the
// subscription's lock. BenchmarkOverhead measures the whole against the
// executor without an observer, in the same run.
//
// # Concurrency
//
// Observe is safe for concurrent use, as package waitset requires. Records
// and the histograms' snapshots may be read at any time, concurrently with
// Observe; a snapshot may miss the runs that finish while it is taken.
package observers
