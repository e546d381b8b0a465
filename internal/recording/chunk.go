package recording

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/klauspost/compress/zstd"
)

// chunker builds MCAP chunks itself, so that a chunk can be closed by
// time as well as by size (the mcap writer closes them by size only): a
// quiet topic's messages reach the file within a second, where a killed
// recorder still finds them. The writer, unchunked, writes the channels
// and the chunks this gives it, and their indexes and statistics on
// Close.
type chunker struct {
	records    bytes.Buffer
	indexes    map[uint16]*mcap.MessageIndex
	order      []uint16 // channels with entries in this chunk, in first-use order
	start, end uint64
	n          int
	enc        *zstd.Encoder
	out        []byte
}

func newChunker() (*chunker, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		return nil, err
	}
	return &chunker{indexes: map[uint16]*mcap.MessageIndex{}, enc: enc, start: math.MaxUint64}, nil
}

// add appends a message record.
func (c *chunker) add(m *mcap.Message) {
	idx := c.indexes[m.ChannelID]
	if idx == nil {
		idx = &mcap.MessageIndex{ChannelID: m.ChannelID}
		c.indexes[m.ChannelID] = idx
	}
	if idx.IsEmpty() {
		c.order = append(c.order, m.ChannelID)
	}
	idx.Add(m.LogTime, uint64(c.records.Len()))
	var head [1 + 8 + 2 + 4 + 8 + 8]byte
	head[0] = byte(mcap.OpMessage)
	binary.LittleEndian.PutUint64(head[1:], uint64(2+4+8+8+len(m.Data)))
	binary.LittleEndian.PutUint16(head[9:], m.ChannelID)
	binary.LittleEndian.PutUint32(head[11:], m.Sequence)
	binary.LittleEndian.PutUint64(head[15:], m.LogTime)
	binary.LittleEndian.PutUint64(head[23:], m.PublishTime)
	c.records.Write(head[:])
	c.records.Write(m.Data)
	c.start, c.end = min(c.start, m.LogTime), max(c.end, m.LogTime)
	c.n++
}

// size returns the uncompressed size of the chunk being built.
func (c *chunker) size() int { return c.records.Len() }

// flush writes the chunk being built, if any, through w, counting its
// messages in w's statistics, and starts the next.
func (c *chunker) flush(w *mcap.Writer) error {
	if c.n == 0 {
		return nil
	}
	raw := c.records.Bytes()
	c.out = c.enc.EncodeAll(raw, c.out[:0])
	chunk := &mcap.Chunk{
		MessageStartTime: c.start,
		MessageEndTime:   c.end,
		UncompressedSize: uint64(len(raw)),
		UncompressedCRC:  crc32.ChecksumIEEE(raw),
		Compression:      string(mcap.CompressionZSTD),
		Records:          c.out,
	}
	indexes := make([]*mcap.MessageIndex, 0, len(c.order))
	for _, id := range c.order {
		idx := c.indexes[id]
		indexes = append(indexes, idx)
		w.Statistics.ChannelMessageCounts[id] += uint64(len(idx.Entries()))
	}
	w.Statistics.MessageCount += uint64(c.n)
	if err := w.WriteChunkWithIndexes(chunk, indexes); err != nil {
		return err
	}
	for _, id := range c.order {
		c.indexes[id].Reset()
	}
	c.records.Reset()
	c.order = c.order[:0]
	c.start, c.end, c.n = math.MaxUint64, 0, 0
	return nil
}
