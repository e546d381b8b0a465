// Package recording writes and reads recordings of MQTT messages in MCAP
// (https://mcap.dev), the format of rosbag2 and Foxglove: what robotexec
// record and run -record write, and what info, play and replay read.
//
// A [Recorder] takes messages from any goroutine without waiting: they go
// into a bounded queue that one goroutine writes to the file, in chunks
// compressed with zstd, with CRCs, and, on Close, the summary and its
// indexes. A message that finds the queue full is dropped and counted,
// never silently lost: Close reports the counts. Each chunk reaches the
// file as a whole, so a recorder killed with SIGKILL leaves a file whose
// complete chunks [Scan] still reads. A write error (a full disk, the file
// size limit) stops the recorder at once, which [Recorder.Done] and
// [Recorder.Err] tell: the file is cut back to its last complete record
// and closed there with its summary and footer where they fit, and it
// holds exactly the messages counted as recorded.
//
// A [Writer] writes the same files on its caller's goroutine, for a
// program that may wait for the disk (robotexec replay): nothing is queued
// or dropped, and the first write error comes back from the call that met
// it, the file salvaged as a Recorder's.
//
// Each topic gets a channel per payload kind: payloads that are valid JSON
// go on a channel with message encoding "json" (no schema), which MCAP
// tools decode and plot; any other payload is kept byte for byte on a
// channel with encoding [BytesEncoding]. A message's log time is when it
// was received (or published, for a process's own outputs); its publish
// time is the same.
//
// # Concurrency
//
// A Recorder is safe for concurrent use; a Writer is not.
package recording
