package recording_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/recording"
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

type msg struct {
	topic, enc string
	at         time.Time
	data       string
}

// Messages recorded come back in order, JSON ones on json channels and
// others byte for byte, with the counts and times of the summary, read
// by Scan and by the mcap library's indexed reader.
func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.mcap")
	r, err := recording.Create(path, recording.Options{ChunkSize: 4096})
	require.NoError(t, err)
	require.True(t, r.Metadata("robotexec.config", map[string]string{"yaml": "nodes: []\n"}))
	var want []msg
	for i := range 1000 {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		m := msg{"imu", recording.JSONEncoding, at, fmt.Sprintf(`{"seq":%d}`, i)}
		if i%10 == 0 {
			m = msg{"cam", recording.BytesEncoding, at, fmt.Sprintf("\x00raw %d", i)}
		}
		want = append(want, m)
		require.True(t, r.Record(m.topic, []byte(m.data), m.at))
	}
	st, err := r.Close()
	require.NoError(t, err)
	require.Equal(t, recording.Stats{Recorded: 1000}, st)

	var got []msg
	s, err := recording.Scan(path, func(m recording.Message) error {
		got = append(got, msg{m.Topic, m.Encoding, m.At, string(m.Data)})
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.True(t, s.Complete, s.Damage)
	require.Equal(t, uint64(1000), s.Messages)
	require.Equal(t, t0, s.Start)
	require.Equal(t, 999*time.Millisecond, s.Duration())
	require.Equal(t, []recording.Channel{
		{Topic: "cam", Encoding: recording.BytesEncoding, Messages: 100, First: t0, Last: t0.Add(990 * time.Millisecond)},
		{Topic: "imu", Encoding: recording.JSONEncoding, Messages: 900, First: t0.Add(time.Millisecond), Last: t0.Add(999 * time.Millisecond)},
	}, s.Channels)
	require.InDelta(t, 100.0, s.Channels[0].Rate(), 0.01)
	require.Equal(t, map[string]string{"yaml": "nodes: []\n"}, s.Metadata["robotexec.config"])
	require.Equal(t, recording.Profile, s.Profile)

	// The library's reader, through the summary and indexes.
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rd, err := mcap.NewReader(f)
	require.NoError(t, err)
	info, err := rd.Info()
	require.NoError(t, err)
	require.Equal(t, uint64(1000), info.Statistics.MessageCount)
	require.Greater(t, info.Statistics.ChunkCount, uint32(1))
	it, err := rd.Messages(mcap.UsingIndex(true))
	require.NoError(t, err)
	n := 0
	for {
		_, _, m, err := it.NextInto(nil)
		if err != nil {
			break
		}
		require.Equal(t, want[n].data, string(m.Data))
		n++
	}
	require.Equal(t, 1000, n)
}

// A file cut short (its writer killed) still gives its complete chunks.
func TestTruncated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.mcap")
	r, err := recording.Create(path, recording.Options{ChunkSize: 1024})
	require.NoError(t, err)
	for i := range 500 {
		r.Record("t", []byte(fmt.Sprintf(`{"i":%d}`, i)), t0.Add(time.Duration(i)*time.Millisecond))
	}
	_, err = r.Close()
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	cut := filepath.Join(t.TempDir(), "cut.mcap")
	require.NoError(t, os.WriteFile(cut, data[:len(data)/2], 0o644))
	var seen []string
	s, err := recording.Scan(cut, func(m recording.Message) error {
		seen = append(seen, string(m.Data))
		return nil
	})
	require.NoError(t, err)
	require.False(t, s.Complete)
	require.NotEmpty(t, s.Damage)
	require.Greater(t, len(seen), 50)
	require.Less(t, len(seen), 500)
	for i, d := range seen {
		require.Equal(t, fmt.Sprintf(`{"i":%d}`, i), d, "a prefix, in order")
	}

	_, err = recording.Scan(filepath.Join(t.TempDir(), "none"), nil)
	require.ErrorIs(t, err, os.ErrNotExist)
	notMCAP := filepath.Join(t.TempDir(), "x.mcap")
	require.NoError(t, os.WriteFile(notMCAP, []byte("nodes: []\n"), 0o644))
	_, err = recording.Scan(notMCAP, nil)
	require.ErrorIs(t, err, recording.ErrNotMCAP)
}

// A full queue drops and counts; a closed recorder refuses.
func TestDrops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.mcap")
	r, err := recording.Create(path, recording.Options{Queue: 1})
	require.NoError(t, err)
	sent := 0
	for range 10000 {
		if r.Record("t", []byte("x"), t0) {
			sent++
		}
	}
	st, err := r.Close()
	require.NoError(t, err)
	require.Equal(t, uint64(sent), st.Recorded)
	require.Equal(t, uint64(10000-sent), st.Dropped)
	require.False(t, r.Record("t", []byte("x"), t0))
	require.Equal(t, uint64(10000-sent+1), r.Stats().Dropped)
	s, err := recording.Scan(path, nil)
	require.NoError(t, err)
	require.Equal(t, uint64(sent), s.Messages)
}
