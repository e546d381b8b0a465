// Package observers holds the executor observers of robotexec's wiring.
//
// [Runs] is an executor.RunObserver that times every callback run: it
// keeps, per callback, histograms of the run's duration and of its
// dispatch latency (trigger → start: from the message's Received time, or
// from the timer's deadline), and hands each run to a chrometrace.Recorder
// for the timeline.
//
// # Cost
//
// The executor calls Runs once per callback (each message of a batch
// once), after it, with two readings of Runs' clock around it
// (Options.Stamp), and nothing at a message's delivery: the latency is
// computed from the time the message already carries. The clock is the CPU's time-stamp counter where the kernel
// trusts it (amd64 Linux with the tsc clock source: ~10 ns a read here,
// against ~26 ns for the monotonic clock, which is the fallback). Each
// worker keeps its own share of a callback's histograms, so an update is
// plain loads and stores on cache lines no other worker writes: no lock,
// no atomic instruction, and no cache miss when a callback's next run is
// on another worker. A scrape adds the shares up, reading their words
// without synchronization (see histogram). BenchmarkOverhead measures the
// whole against the executor without it, in the same run.
//
// # Concurrency
//
// Ran is safe for concurrent use by the executor's workers. Records and the
// histograms' snapshots may be read at any time, concurrently with Ran; a
// snapshot may miss the runs that finish while it is taken.
package observers
