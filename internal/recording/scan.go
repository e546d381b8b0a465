package recording

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/foxglove/mcap/go/mcap"
)

// Summary describes a recording: what [Scan] finds.
type Summary struct {
	// Profile and Library are the file header's.
	Profile, Library string
	// Channels are the file's channels with messages, by topic, then
	// encoding.
	Channels []Channel
	// Messages counts the messages; Start and End are the first and last
	// log times (zero without messages).
	Messages   uint64
	Start, End time.Time
	// Metadata are the file's metadata records, by name.
	Metadata map[string]map[string]string
	// Complete is false for a file whose writer did not finish (killed,
	// out of space): Scan read its complete chunks, up to Damage.
	Complete bool
	// Damage says where and why the reading of an incomplete file
	// stopped.
	Damage string
}

// Channel is a topic and encoding of a recording, with its messages.
type Channel struct {
	Topic, Encoding string
	// Role and Node are those of its messages (see Role).
	Role        Role
	Node        string
	Messages    uint64
	First, Last time.Time
}

// Message is a message of a recording, as Scan passes it.
type Message struct {
	Topic, Encoding string
	Role            Role
	Node            string
	// At is the log time: when it was received or published.
	At time.Time
	// Data is the payload, valid during Scan's call only.
	Data []byte
}

// Duration returns End minus Start.
func (s *Summary) Duration() time.Duration { return s.End.Sub(s.Start) }

// Rate returns the channel's mean message rate, in Hz, over its own time
// span; 0 with fewer than two messages.
func (c Channel) Rate() float64 {
	if c.Messages < 2 || !c.Last.After(c.First) {
		return 0
	}
	return float64(c.Messages-1) / c.Last.Sub(c.First).Seconds()
}

// ErrNotMCAP is the cause of Scan's error for a file that is not an MCAP
// file.
var ErrNotMCAP = errors.New("not an MCAP file")

// Scan reads the recording at path from start to end, record by record,
// checking the chunks' CRCs, so that it also reads the complete chunks of
// a file whose writer did not finish. Each message is passed to each, if
// not nil, in file order; data is valid during the call only. An error of
// each ends Scan with that error.
func Scan(path string, each func(m Message) error) (*Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lx, err := mcap.NewLexer(f, &mcap.LexerOptions{ValidateChunkCRCs: true, EmitInvalidChunks: false})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, ErrNotMCAP)
	}
	defer lx.Close()
	sc := &scan{s: &Summary{Metadata: map[string]map[string]string{}}, chans: map[uint16]*Channel{}, each: each}
	for {
		tok, rec, err := lx.Next(nil)
		if err == nil {
			err = sc.record(tok, rec)
		}
		var cb callbackError
		if errors.As(err, &cb) {
			return nil, cb.err
		}
		if errors.Is(err, io.EOF) {
			sc.s.Damage = "the file ends before its footer"
			break
		}
		if err != nil {
			sc.s.Damage = err.Error()
			break
		}
		if tok == mcap.TokenFooter {
			sc.s.Complete = true
			break
		}
	}
	return sc.summary(), nil
}

// scan gathers a Summary.
type scan struct {
	s     *Summary
	chans map[uint16]*Channel
	order []uint16
	each  func(m Message) error
}

func (sc *scan) record(tok mcap.TokenType, rec []byte) error {
	switch tok {
	case mcap.TokenHeader:
		h, err := mcap.ParseHeader(rec)
		if err != nil {
			return err
		}
		sc.s.Profile, sc.s.Library = h.Profile, h.Library
	case mcap.TokenChannel:
		c, err := mcap.ParseChannel(rec)
		if err != nil {
			return err
		}
		if _, ok := sc.chans[c.ID]; !ok {
			sc.chans[c.ID] = &Channel{Topic: c.Topic, Encoding: c.MessageEncoding,
				Role: Role(c.Metadata[RoleKey]), Node: c.Metadata[NodeKey]}
			sc.order = append(sc.order, c.ID)
		}
	case mcap.TokenMessage:
		return sc.message(rec)
	case mcap.TokenMetadata:
		m, err := mcap.ParseMetadata(rec)
		if err != nil {
			return err
		}
		sc.s.Metadata[m.Name] = m.Metadata
	}
	return nil
}

func (sc *scan) message(rec []byte) error {
	m, err := mcap.ParseMessage(rec)
	if err != nil {
		return err
	}
	c := sc.chans[m.ChannelID]
	if c == nil {
		return fmt.Errorf("message on unknown channel %d", m.ChannelID)
	}
	at := time.Unix(0, int64(m.LogTime)).UTC()
	if c.Messages == 0 || at.Before(c.First) {
		c.First = at
	}
	if at.After(c.Last) {
		c.Last = at
	}
	c.Messages++
	if sc.each != nil {
		msg := Message{Topic: c.Topic, Encoding: c.Encoding, Role: c.Role, Node: c.Node, At: at, Data: m.Data}
		if err := sc.each(msg); err != nil {
			return callbackError{err}
		}
	}
	return nil
}

// callbackError is an error of Scan's callback, which ends Scan.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }

func (sc *scan) summary() *Summary {
	s := sc.s
	for _, id := range sc.order {
		c := sc.chans[id]
		if c.Messages == 0 {
			continue
		}
		s.Channels = append(s.Channels, *c)
		s.Messages += c.Messages
		if s.Start.IsZero() || c.First.Before(s.Start) {
			s.Start = c.First
		}
		if c.Last.After(s.End) {
			s.End = c.Last
		}
	}
	sort.Slice(s.Channels, func(i, j int) bool {
		a, b := s.Channels[i], s.Channels[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Role != b.Role {
			return a.Role < b.Role
		}
		if a.Node != b.Node {
			return a.Node < b.Node
		}
		return a.Encoding < b.Encoding
	})
	return s
}
