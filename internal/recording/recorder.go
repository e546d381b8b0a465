package recording

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// JSONEncoding is the message encoding of channels of JSON payloads.
	JSONEncoding = "json"
	// BytesEncoding is the message encoding of channels of other
	// payloads, kept byte for byte.
	BytesEncoding = "application/octet-stream"
	// Profile is the MCAP profile of robotexec's recordings.
	Profile = "robotexec"

	// DefaultQueue is the default of Options.Queue.
	DefaultQueue = 1 << 16
	// DefaultChunkSize is the default of Options.ChunkSize.
	DefaultChunkSize = 1 << 20

	// RoleKey is the channel metadata key of its messages' Role.
	RoleKey = "robotexec.role"
	// NodeKey is the channel metadata key of the node that published or
	// ran its messages.
	NodeKey = "robotexec.node"

	// flushEvery is the longest a message waits in a chunk being built.
	flushEvery = time.Second
)

// Options configure a Recorder.
type Options struct {
	// Queue is how many messages may wait for the writer; a message
	// beyond it is dropped and counted. (optional) Defaults to
	// DefaultQueue.
	Queue int
	// ChunkSize is the uncompressed size at which a chunk is closed and
	// written; a chunk is also written a second after the last, at most.
	// A recorder killed loses the chunk being filled and its queue.
	// (optional) Defaults to DefaultChunkSize.
	ChunkSize int64
	// Library names the writer in the file's header. (optional)
	Library string
}

// Stats counts what a Recorder did.
type Stats struct {
	// Recorded counts the messages the file holds: those of the chunks
	// written whole. Dropped counts the others: refused because the
	// queue was full or the recorder closed or stopped, or lost to a
	// write error.
	Recorded, Dropped uint64
}

// Role says what a message was to the run that recorded it. The role and
// the node, when set, are in the metadata of the message's channel.
type Role string

const (
	// Plain is a message recorded by robotexec record.
	Plain Role = ""
	// Input is a message that entered a subscription of the run from
	// outside the process, at the time it was received.
	Input Role = "input"
	// Output is a message a node of the run published.
	Output Role = "output"
	// TimerCall is a periodic timer's call: JSON {"expected", "missed"}.
	TimerCall Role = "timer"
)

// item is a message or metadata waiting for the writer.
type item struct {
	topic   string
	role    Role
	node    string
	payload []byte
	at      time.Time
	meta    map[string]string // metadata named topic, when not nil
}

// Recorder writes messages to an MCAP file. The first write error (a full
// disk, the file size limit, an I/O error) stops it at once: it takes no
// more messages, cuts the file back to its last complete record, closes it
// with a summary of what it holds there where that fits, and closes Done.
type Recorder struct {
	path  string
	q     chan item
	done  chan struct{}
	err   error // the writer's first error, read after done
	close sync.Once

	mu     sync.RWMutex // held for reading while sending to q
	closed bool

	recorded, dropped atomic.Uint64
}

// Create creates the file at path (truncating it) and starts a recorder
// writing to it.
func Create(path string, opts Options) (*Recorder, error) {
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	w, err := createFile(path, opts)
	if err != nil {
		return nil, err
	}
	r := &Recorder{path: path, q: make(chan item, opts.Queue), done: make(chan struct{})}
	go r.run(w)
	return r, nil
}

// createFile creates the file at path (truncating it) and writes its
// header, with opts' defaults applied.
func createFile(path string, opts Options) (*fileWriter, error) {
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = DefaultChunkSize
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := newFileWriter(f, opts)
	if err != nil {
		_ = f.Close()
		return nil, describe(path, err)
	}
	return w, nil
}

// Path returns the file's path.
func (r *Recorder) Path() string { return r.path }

// Record queues a message received (or published) at at; payload must not
// be modified afterwards. It never waits: it reports false, and counts a
// drop, when the queue is full or the recorder closed or stopped.
func (r *Recorder) Record(topic string, payload []byte, at time.Time) bool {
	return r.put(item{topic: topic, payload: payload, at: at})
}

// RecordAs records like Record, on a channel of role and node (which may
// be empty).
func (r *Recorder) RecordAs(role Role, node, topic string, payload []byte, at time.Time) bool {
	return r.put(item{topic: topic, role: role, node: node, payload: payload, at: at})
}

// Metadata queues a metadata record named name.
func (r *Recorder) Metadata(name string, values map[string]string) bool {
	return r.put(item{topic: name, meta: values})
}

func (r *Recorder) put(it item) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if !r.closed {
		select {
		case r.q <- it:
			return true
		default:
		}
	}
	if it.meta == nil {
		r.dropped.Add(1)
	}
	return false
}

// Stats returns the counts so far.
func (r *Recorder) Stats() Stats {
	return Stats{Recorded: r.recorded.Load(), Dropped: r.dropped.Load()}
}

// Done returns a channel that is closed when the recorder has stopped:
// at once after a write error, else when Close has closed the file.
func (r *Recorder) Done() <-chan struct{} { return r.done }

// Err returns the write error that stopped the recorder, naming the file
// and the cause, once Done is closed; nil before, and after a clean Close.
func (r *Recorder) Err() error {
	select {
	case <-r.done:
		return r.err
	default:
		return nil
	}
}

// Close writes what is queued, the summary and the footer, closes the
// file and returns the counts and the error that stopped the recorder,
// if any; Recorded is then exactly what the file holds.
func (r *Recorder) Close() (Stats, error) {
	r.close.Do(func() {
		r.mu.Lock()
		r.closed = true
		close(r.q)
		r.mu.Unlock()
	})
	<-r.done
	return r.Stats(), r.err
}

// run is the writer goroutine. A chunk is written when it reaches the
// chunk size, and at least once a second. The first write error stops
// it at once: see fail.
func (r *Recorder) run(w *fileWriter) {
	defer close(r.done)
	tick := time.NewTicker(flushEvery)
	defer tick.Stop()
	for {
		var err error
		select {
		case it, ok := <-r.q:
			switch {
			case !ok:
				if err = w.finish(); err == nil {
					r.recorded.Store(w.recorded())
					if err = w.f.Close(); err != nil {
						r.err = describe(r.path, err)
					}
					return
				}
			case it.meta != nil:
				err = w.metadata(it.topic, it.meta)
			default:
				err = w.message(it)
			}
		case <-tick.C:
			err = w.flush()
		}
		r.recorded.Store(w.recorded())
		if err != nil {
			r.fail(w, err)
			return
		}
	}
}

// fail stops the recorder after the write error err: it takes no more
// messages, counts those queued and those the file does not hold as
// dropped, and salvages the file, so that its count is Recorded.
func (r *Recorder) fail(w *fileWriter, err error) {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	// Nothing is sent from now on: the queue only empties.
	for len(r.q) > 0 {
		if it, ok := <-r.q; ok && it.meta == nil {
			r.dropped.Add(1)
		}
	}
	r.dropped.Add(w.lost())
	r.err = describe(r.path, err)
	if serr := w.salvage(); serr != nil {
		r.err = errors.Join(r.err, describe(r.path, serr))
	}
}

// describe returns err, met writing the file at path, naming the file
// once: "recording: run.mcap: write: file too large".
func describe(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		err = fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return fmt.Errorf("recording: %s: %w", path, err)
}
