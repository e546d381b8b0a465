// Package chrometrace records callback runs and writes them as Chrome
// trace-event JSON, the format that Perfetto (ui.perfetto.dev) and
// chrome://tracing load.
//
// A [Recorder] keeps the last runs of each worker in a ring of its own, so
// that recording is a few stores on the worker's own memory: no lock, no
// shared counter, no allocation. Its memory is bounded: 32 bytes a run,
// allocated when it is made. [Recorder.WriteTo] writes the JSON Object
// Format:
//
//	{"displayTimeUnit":"ms","traceEvents":[
//	 {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"worker 0"}},
//	 {"ph":"X","name":"imu_filter: timer(100ms)","cat":"timer","pid":1,"tid":1,
//	  "ts":1042.125,"dur":3.5,"args":{"node":"imu_filter","callback":"timer(100ms)","entity":3,"latency_us":12.25}},
//	 ...]}
//
// with one complete event ("ph":"X") per run, ts and dur in microseconds
// with nanosecond digits, and one track (tid) per worker, named by a
// metadata event. Worker N is tid N+1: Perfetto's JSON importer has taken
// tid 0 for the idle thread and merged it with tid 1.
//
// # Concurrency
//
// Each worker's ring has one writer: [Recorder.Add] for worker w must not
// be called from two goroutines at once (an executor runs one callback at a
// time on each worker). Adds to different workers run in parallel.
// [Recorder.WriteTo] and [Recorder.Len] must not run concurrently with
// Add: call them once the executor has stopped.
package chrometrace
