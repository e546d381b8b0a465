package recording_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mcapjs"
	"github.com/robotexec/robotexec/internal/recording"
)

// mcapjsDir is the directory of the independent reader: @mcap/core, the
// reference TypeScript library, under Node (.ci/run installs it).
const mcapjsDir = "testdata/mcapjs"

// nodeReader returns the node binary that runs the reader, installed.
func nodeReader(t *testing.T) string { return mcapjs.Node(t, mcapjsDir) }

// A recording read by @mcap/core through its summary and indexes, with
// CRCs checked: the same channels, counts, payloads, times and metadata.
func TestIndependentReader(t *testing.T) {
	node := nodeReader(t)
	path := filepath.Join(t.TempDir(), "r.mcap")
	r, err := recording.Create(path, recording.Options{ChunkSize: 2048})
	require.NoError(t, err)
	r.Metadata("robotexec.config", map[string]string{"yaml": "nodes: []\n"})
	type sent struct {
		topic   string
		payload []byte
		at      time.Time
	}
	var all []sent
	for i := range 300 {
		s := sent{"sensors/imu", []byte(fmt.Sprintf(`{"seq":%d}`, i)), t0.Add(time.Duration(i) * time.Millisecond)}
		if i%3 == 0 {
			s = sent{"camera/raw", []byte{0, 1, 2, byte(i)}, s.at}
		}
		all = append(all, s)
		require.True(t, r.Record(s.topic, s.payload, s.at))
	}
	_, err = r.Close()
	require.NoError(t, err)

	out, err := exec.Command(node, filepath.Join(mcapjsDir, "read.mjs"), path).Output()
	require.NoError(t, err, "%s", out)
	var got struct {
		Profile      string `json:"profile"`
		MessageCount int    `json:"messageCount"`
		ChunkCount   int    `json:"chunkCount"`
		Channels     []struct {
			Topic, Encoding string
		} `json:"channels"`
		Messages []struct {
			Topic, LogTime, Data string
		} `json:"messages"`
		Metadata map[string]map[string]string `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	require.Equal(t, recording.Profile, got.Profile)
	require.Equal(t, 300, got.MessageCount)
	require.Greater(t, got.ChunkCount, 1)
	require.ElementsMatch(t, []struct{ Topic, Encoding string }{
		{"camera/raw", recording.BytesEncoding}, {"sensors/imu", recording.JSONEncoding},
	}, got.Channels)
	require.Len(t, got.Messages, 300)
	for i, m := range got.Messages {
		data, err := base64.StdEncoding.DecodeString(m.Data)
		require.NoError(t, err)
		require.Equal(t, all[i].topic, m.Topic, "message %d", i)
		require.Equal(t, all[i].payload, data, "message %d", i)
		require.Equal(t, strconv.FormatInt(all[i].at.UnixNano(), 10), m.LogTime, "message %d", i)
	}
	require.Equal(t, map[string]string{"yaml": "nodes: []\n"}, got.Metadata["robotexec.config"])
}
