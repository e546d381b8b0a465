package recording

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foxglove/mcap/go/mcap"
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
	// Recorded counts messages written; Dropped those refused because
	// the queue was full or the recorder closed.
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

// Recorder writes messages to an MCAP file.
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
		return nil, fmt.Errorf("recording: %s: %w", path, err)
	}
	r := &Recorder{path: path, q: make(chan item, opts.Queue), done: make(chan struct{})}
	go r.run(w)
	return r, nil
}

// Path returns the file's path.
func (r *Recorder) Path() string { return r.path }

// Record queues a message received (or published) at at; payload must not
// be modified afterwards. It never waits: it reports false, and counts a
// drop, when the queue is full or the recorder closed.
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
	if r.closed {
		r.dropped.Add(1)
		return false
	}
	select {
	case r.q <- it:
		return true
	default:
		r.dropped.Add(1)
		return false
	}
}

// Stats returns the counts so far.
func (r *Recorder) Stats() Stats {
	return Stats{Recorded: r.recorded.Load(), Dropped: r.dropped.Load()}
}

// Close writes what is queued, the summary and the footer, closes the
// file and returns the counts and the first error met writing.
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
// chunk size, and at least once a second.
func (r *Recorder) run(w *fileWriter) {
	defer close(r.done)
	tick := time.NewTicker(flushEvery)
	defer tick.Stop()
	for {
		var it item
		var ok bool
		select {
		case it, ok = <-r.q:
		case <-tick.C:
			if r.err == nil {
				r.err = w.flush()
			}
			continue
		}
		if !ok {
			break
		}
		r.write(w, it)
	}
	if err := w.close(); r.err == nil {
		r.err = err
	}
	if r.err != nil {
		r.err = fmt.Errorf("recording: %s: %w", r.path, r.err)
	}
}

// write writes one item, counting it.
func (r *Recorder) write(w *fileWriter, it item) {
	switch {
	case r.err != nil:
		if it.meta == nil {
			r.dropped.Add(1)
		}
	case it.meta != nil:
		r.err = w.metadata(it.topic, it.meta)
	default:
		if r.err = w.message(it); r.err == nil {
			r.recorded.Add(1)
		} else {
			r.dropped.Add(1)
		}
	}
}

// chanKey names a channel: a topic, its payloads' encoding, the role and
// node of its messages.
type chanKey struct {
	topic, encoding string
	role            Role
	node            string
}

// fileWriter owns the MCAP writer; only the writer goroutine uses it.
type fileWriter struct {
	f         *os.File
	buf       *bufio.Writer
	w         *mcap.Writer
	chunk     *chunker
	chunkSize int
	channels  map[chanKey]uint16
	seq       map[uint16]uint32
}

func newFileWriter(f *os.File, opts Options) (*fileWriter, error) {
	buf := bufio.NewWriterSize(f, 1<<20)
	// Unchunked: the chunker makes the chunks.
	w, err := mcap.NewWriter(buf, &mcap.WriterOptions{IncludeCRC: true})
	if err != nil {
		return nil, err
	}
	lib := "robotexec"
	if opts.Library != "" {
		lib = opts.Library
	}
	if err := w.WriteHeader(&mcap.Header{Profile: Profile, Library: lib}); err != nil {
		return nil, err
	}
	c, err := newChunker()
	if err != nil {
		return nil, err
	}
	fw := &fileWriter{f: f, buf: buf, w: w, chunk: c, chunkSize: int(opts.ChunkSize),
		channels: map[chanKey]uint16{}, seq: map[uint16]uint32{}}
	return fw, buf.Flush()
}

func (fw *fileWriter) message(it item) error {
	enc := BytesEncoding
	if json.Valid(it.payload) {
		enc = JSONEncoding
	}
	key := chanKey{it.topic, enc, it.role, it.node}
	id, ok := fw.channels[key]
	if !ok {
		if len(fw.channels) >= math.MaxUint16 {
			return fmt.Errorf("more than %d channels", math.MaxUint16)
		}
		id = uint16(len(fw.channels) + 1)
		meta := map[string]string{}
		if it.role != Plain {
			meta[RoleKey] = string(it.role)
		}
		if it.node != "" {
			meta[NodeKey] = it.node
		}
		// Written ahead of the chunk that first uses it.
		if err := fw.w.WriteChannel(&mcap.Channel{ID: id, Topic: it.topic, MessageEncoding: enc, Metadata: meta}); err != nil {
			return err
		}
		fw.channels[key] = id
	}
	fw.seq[id]++
	t := uint64(it.at.UnixNano())
	fw.chunk.add(&mcap.Message{ChannelID: id, Sequence: fw.seq[id], LogTime: t, PublishTime: t, Data: it.payload})
	if fw.chunk.size() >= fw.chunkSize {
		return fw.flush()
	}
	return nil
}

func (fw *fileWriter) metadata(name string, values map[string]string) error {
	if err := fw.flush(); err != nil {
		return err
	}
	if err := fw.w.WriteMetadata(&mcap.Metadata{Name: name, Metadata: values}); err != nil {
		return err
	}
	return fw.buf.Flush()
}

// flush writes the chunk being built, and everything before it, to the
// file.
func (fw *fileWriter) flush() error {
	if err := fw.chunk.flush(fw.w); err != nil {
		return err
	}
	return fw.buf.Flush()
}

func (fw *fileWriter) close() error {
	err := fw.flush()
	if err == nil {
		err = fw.w.Close()
	}
	if ferr := fw.buf.Flush(); err == nil {
		err = ferr
	}
	if cerr := fw.f.Close(); err == nil {
		err = cerr
	}
	return err
}
