package recording

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"

	"github.com/foxglove/mcap/go/mcap"
)

// chanKey names a channel: a topic, its payloads' encoding, the role and
// node of its messages.
type chanKey struct {
	topic, encoding string
	role            Role
	node            string
}

// fileWriter owns the file and the MCAP writer; only the writer goroutine
// uses it. It keeps a mark of what the file holds whole, so that after a
// write error it can cut the file back to the mark and close it with a
// summary of exactly that (salvage).
type fileWriter struct {
	f         *os.File
	buf       *bufio.Writer
	w         *mcap.Writer
	chunk     *chunker
	chunkSize int
	channels  map[chanKey]uint16
	written   []*mcap.Channel // the channel records written, in order
	seq       map[uint16]uint32
	added     uint64 // messages given to the chunker
	mark      mark
}

// mark is what the file holds up to the end of the last records flushed
// to it: its size then, how many of the channels, chunk indexes and
// metadata indexes were written before it, and the statistics then.
type mark struct {
	offset                     uint64
	channels, chunks, metadata int
	stats                      mcap.Statistics
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
	return fw, fw.flushBuffer()
}

// recorded returns how many messages the file holds whole.
func (fw *fileWriter) recorded() uint64 { return fw.mark.stats.MessageCount }

// lost returns how many messages given to the writer the file does not
// hold: those of a chunk not yet written, or cut back by salvage.
func (fw *fileWriter) lost() uint64 { return fw.added - fw.recorded() }

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
		c := &mcap.Channel{ID: id, Topic: it.topic, MessageEncoding: enc, Metadata: meta}
		if err := fw.w.WriteChannel(c); err != nil {
			return err
		}
		fw.channels[key] = id
		fw.written = append(fw.written, c)
	}
	fw.seq[id]++
	t := uint64(it.at.UnixNano())
	fw.chunk.add(&mcap.Message{ChannelID: id, Sequence: fw.seq[id], LogTime: t, PublishTime: t, Data: it.payload})
	fw.added++
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
	return fw.flushBuffer()
}

// flush writes the chunk being built, and everything before it, to the
// file.
func (fw *fileWriter) flush() error {
	if err := fw.chunk.flush(fw.w); err != nil {
		return err
	}
	return fw.flushBuffer()
}

// flushBuffer writes what the buffer holds to the file and, when that
// succeeds, moves the mark to the file's end.
func (fw *fileWriter) flushBuffer() error {
	if err := fw.buf.Flush(); err != nil {
		return err
	}
	if fw.w.Offset() == fw.mark.offset {
		return nil
	}
	st := *fw.w.Statistics
	st.ChannelMessageCounts = maps.Clone(st.ChannelMessageCounts)
	fw.mark = mark{offset: fw.w.Offset(), channels: len(fw.written),
		chunks: len(fw.w.ChunkIndexes), metadata: len(fw.w.MetadataIndexes), stats: st}
	return nil
}

// finish writes the last chunk, the summary and the footer; the file
// stays open, for salvage after an error.
func (fw *fileWriter) finish() error {
	err := fw.flush()
	if err == nil {
		err = fw.w.Close()
	}
	if err == nil {
		err = fw.buf.Flush()
	}
	return err
}

// salvage closes the file after a write error. It cuts the file back to
// the mark, where its last complete record ends, and writes there a
// summary of what the file holds and the footer, as a writer that had
// stopped at the mark would have. Where even that does not fit (the
// truncation freed too little), the file ends at the mark, without a
// footer, and Scan still reads all of it. The error is that of a file
// that could not be cut or closed.
func (fw *fileWriter) salvage() error {
	end := int64(fw.mark.offset)
	err := fw.f.Truncate(end)
	if err == nil {
		if _, werr := fw.f.WriteAt(fw.summary(), end); werr != nil {
			err = fw.f.Truncate(end)
		}
	}
	if cerr := fw.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// summary returns the records that close a file cut at the mark: the data
// end, the summary section (channels, statistics, chunk indexes, metadata
// indexes), the summary offsets, the footer and the magic.
func (fw *fileWriter) summary() []byte {
	m := &fw.mark
	var b bytes.Buffer
	// Writes to a bytes.Buffer cannot fail, nor can an unchunked writer's
	// records without schemas: the writers' errors are nil.
	de, _ := mcap.NewWriter(&b, &mcap.WriterOptions{SkipMagic: true})
	// The data section's CRC would cover the bytes cut: 0 says "none".
	_ = de.WriteDataEnd(&mcap.DataEnd{})
	start := m.offset + uint64(b.Len())
	// A second writer, whose offsets and CRC start with the summary.
	sw, _ := mcap.NewWriter(&b, &mcap.WriterOptions{IncludeCRC: true, SkipMagic: true})
	var groups []*mcap.SummaryOffset
	group := func(op mcap.OpCode, n int, write func(i int)) {
		if n == 0 {
			return
		}
		at := sw.Offset()
		for i := range n {
			write(i)
		}
		groups = append(groups, &mcap.SummaryOffset{GroupOpcode: op, GroupStart: start + at, GroupLength: sw.Offset() - at})
	}
	// The channels first: the statistics and the chunk indexes list the
	// channels the writer knows.
	group(mcap.OpChannel, m.channels, func(i int) { _ = sw.WriteChannel(fw.written[i]) })
	group(mcap.OpStatistics, 1, func(int) { _ = sw.WriteStatistics(&m.stats) })
	group(mcap.OpChunkIndex, m.chunks, func(i int) { _ = sw.WriteChunkIndex(fw.w.ChunkIndexes[i]) })
	group(mcap.OpMetadataIndex, m.metadata, func(i int) { _ = sw.WriteMetadataIndex(fw.w.MetadataIndexes[i]) })
	offsets := start + sw.Offset()
	for _, g := range groups {
		_ = sw.WriteSummaryOffset(g)
	}
	_ = sw.WriteFooter(&mcap.Footer{SummaryStart: start, SummaryOffsetStart: offsets})
	b.Write(mcap.Magic)
	return b.Bytes()
}
