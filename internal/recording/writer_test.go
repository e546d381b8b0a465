package recording_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/recording"
)

// writerReport is what the helper saw writing with a Writer.
type writerReport struct {
	FirstErr int      // the message whose WriteAs returned the first error, -1 if none
	Errs     []string // every WriteAs's error, from the first on
	Closed   recording.Stats
	CloseErr string
}

// writeStops writes the helper's messages (see recordStops, without the
// metadata) to path with a Writer, each a chunk of its own, calling
// WriteAs for all of them whatever it returns, then closes it.
func writeStops(path string) (writerReport, error) {
	w, err := recording.CreateWriter(path, recording.Options{ChunkSize: 1})
	if err != nil {
		return writerReport{}, err
	}
	rep := writerReport{FirstErr: -1}
	for i := range stopMessages {
		if err := w.WriteAs(recording.Output, "n", "cam", stopPayload(i), stopTime(i)); err != nil {
			if rep.FirstErr < 0 {
				rep.FirstErr = i
			}
			rep.Errs = append(rep.Errs, err.Error())
		}
	}
	st, err := w.Close()
	rep.Closed = st
	if err != nil {
		rep.CloseErr = err.Error()
	}
	return rep, nil
}

// TestWriterError: a Writer returns the first write error (here EFBIG,
// past the file size limit) from the WriteAs that met it, naming the file
// and the cause, and the same from every later call and from Close; the
// file holds exactly the messages counted as recorded, the chunks written
// whole before the error, with its summary.
func TestWriterError(t *testing.T) {
	ref := filepath.Join(t.TempDir(), "ref.mcap")
	_, err := writeStops(ref)
	require.NoError(t, err)
	const kept = 4
	path := filepath.Join(t.TempDir(), "stopped.mcap")
	var rep writerReport
	runHelper(t, fmt.Sprintf("%s %d writer", path, chunkEnd(t, ref, kept)+2048), &rep)

	cause := "recording: " + path + ": write: file too large"
	require.Equal(t, kept, rep.FirstErr, "the first message whose chunk does not fit")
	require.Len(t, rep.Errs, stopMessages-kept)
	for _, e := range rep.Errs {
		require.Equal(t, cause, e)
	}
	require.Equal(t, cause, rep.CloseErr)
	require.Equal(t, recording.Stats{Recorded: kept, Dropped: stopMessages - kept}, rep.Closed)

	s, err := recording.Scan(path, nil)
	require.NoError(t, err)
	require.True(t, s.Complete, s.Damage)
	require.Equal(t, uint64(kept), s.Messages)
	checkIndexed(t, path, kept)
}

// TestWriterDevFull: on /dev/full, whose every write fails with ENOSPC,
// CreateWriter fails at the header, naming the file and the cause.
func TestWriterDevFull(t *testing.T) {
	_, err := recording.CreateWriter("/dev/full", recording.Options{})
	require.EqualError(t, err, "recording: /dev/full: write: no space left on device")
}
