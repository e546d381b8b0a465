package recording

import (
	"errors"
	"time"
)

// Writer writes an MCAP file as a Recorder does, but on its caller's
// goroutine: a call returns once the file has taken what it had to take,
// and the first write error comes back from the call that met it. Nothing
// is queued or dropped, so a program that makes messages faster than the
// file takes them, and may wait for it (robotexec replay), waits. After
// the first write error the file is cut back to its last complete record
// and closed with a summary of what it holds there, as a Recorder's is,
// and every later call returns that error.
//
// A Writer is not safe for concurrent use.
type Writer struct {
	path    string
	fw      *fileWriter
	err     error // the first write error; the file is closed then
	closed  bool
	refused uint64 // messages given after the error or Close
}

// CreateWriter creates the file at path (truncating it) and writes its
// header. Options.Queue does not apply.
func CreateWriter(path string, opts Options) (*Writer, error) {
	fw, err := createFile(path, opts)
	if err != nil {
		return nil, err
	}
	return &Writer{path: path, fw: fw}, nil
}

// Path returns the file's path.
func (w *Writer) Path() string { return w.path }

// WriteAs writes a message received (or published) at at, on a channel of
// role and node (which may be empty), as Recorder.RecordAs does; payload
// must not be modified afterwards. The message reaches the file with its
// chunk, when the chunk is full or at Close. It returns the write error
// that stopped the writer, naming the file and the cause: this call's, or
// an earlier one's, in which case the message is refused and counted as
// dropped.
func (w *Writer) WriteAs(role Role, node, topic string, payload []byte, at time.Time) error {
	if w.err != nil || w.closed {
		w.refused++
		if w.err == nil {
			return errors.New("recording: " + w.path + ": write after Close")
		}
		return w.err
	}
	if err := w.fw.message(item{topic: topic, role: role, node: node, payload: payload, at: at}); err != nil {
		w.fail(err)
	}
	return w.err
}

// Close writes the last chunk, the summary and the footer and closes the
// file, unless a write error has closed it already, and returns the
// counts and the error that stopped the writer, if any: Recorded is then
// exactly what the file holds, Dropped the messages given that it does
// not.
func (w *Writer) Close() (Stats, error) {
	if !w.closed && w.err == nil {
		if err := w.fw.finish(); err != nil {
			w.fail(err)
		} else if err := w.fw.f.Close(); err != nil {
			w.err = describe(w.path, err)
		}
	}
	w.closed = true
	return Stats{Recorded: w.fw.recorded(), Dropped: w.fw.lost() + w.refused}, w.err
}

// fail stops the writer after the write error err and salvages the file.
func (w *Writer) fail(err error) {
	w.err = describe(w.path, err)
	if serr := w.fw.salvage(); serr != nil {
		w.err = errors.Join(w.err, describe(w.path, serr))
	}
}
