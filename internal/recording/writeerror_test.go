package recording_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mcapjs"
	"github.com/robotexec/robotexec/internal/recording"
	"github.com/robotexec/robotexec/internal/testenv"
)

// limitedEnv, when set ("PATH LIMIT"), makes the test binary the helper
// of TestWriteError: a process whose files may not grow past LIMIT bytes
// (RLIMIT_FSIZE), so that the kernel fails the recorder's writes with
// EFBIG, as a full disk fails them with ENOSPC.
const limitedEnv = "ROBOTEXEC_RECORDING_LIMITED"

func TestMain(m *testing.M) {
	if spec := os.Getenv(limitedEnv); spec != "" {
		os.Exit(recordLimited(spec))
	}
	os.Exit(testenv.Run(m))
}

// The helper records failing writes: one metadata record, then
// stopMessages messages, each a chunk of its own (ChunkSize 1) of 8 KiB
// that zstd cannot shrink, so that the file's layout is known in advance.
const stopMessages = 10

func stopPayload(i int) []byte {
	b := make([]byte, 8<<10)
	rng := rand.New(rand.NewPCG(26, uint64(i)))
	for j := range b {
		b[j] = byte(rng.Uint32())
	}
	return b
}

func stopTime(i int) time.Time { return t0.Add(time.Duration(i) * time.Millisecond) }

// recordStops writes the helper's recording to path, then closes it once
// the recorder has stopped by itself, or at once when wait is false.
func recordStops(path string, wait bool) (helperReport, error) {
	r, err := recording.Create(path, recording.Options{ChunkSize: 1})
	if err != nil {
		return helperReport{}, err
	}
	r.Metadata("robotexec.config", map[string]string{"yaml": "nodes: []\n"})
	for i := range stopMessages {
		r.Record("cam", stopPayload(i), stopTime(i))
	}
	var rep helperReport
	if wait {
		select {
		case <-r.Done():
			rep.StoppedByItself = true
			rep.Err = r.Err().Error()
			rep.AtStop = r.Stats()
		case <-time.After(10 * time.Second):
		}
	}
	st, err := r.Close()
	rep.Closed = st
	if err != nil {
		rep.CloseErr = err.Error()
	}
	return rep, nil
}

// helperReport is what the helper saw, on its stdout.
type helperReport struct {
	StoppedByItself bool   // Done was closed before Close
	Err             string // Err then
	AtStop, Closed  recording.Stats
	CloseErr        string
}

// recordLimited is the helper: spec is "PATH LIMIT", or "PATH LIMIT
// writer" to write with a Writer (see writeStops).
func recordLimited(spec string) int {
	fields := strings.Fields(spec)
	n, err := strconv.ParseUint(fields[1], 10, 64)
	if err == nil {
		err = syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n})
	}
	var rep any
	if err == nil && len(fields) > 2 {
		rep, err = writeStops(fields[0])
	} else if err == nil {
		rep, err = recordStops(fields[0], true)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_ = json.NewEncoder(os.Stdout).Encode(rep)
	return 0
}

// TestWriteError: a write error (here EFBIG, past the file size limit)
// stops the recorder at once, before Close, with an error naming the
// file and the cause. The file is cut back to its last complete chunk and
// holds exactly the messages counted as recorded, read by Scan and by
// the independent reader: closed with its summary and footer where they
// fit, and without them, still readable from start to end, where they
// do not.
func TestWriteError(t *testing.T) {
	// The same recording without a limit says where its chunks end.
	ref := filepath.Join(t.TempDir(), "ref.mcap")
	_, err := recordStops(ref, false)
	require.NoError(t, err)
	const kept = 4
	end := chunkEnd(t, ref, kept)
	for _, tc := range []struct {
		name     string
		room     uint64 // bytes of room past the kept chunks, less than a chunk
		complete bool
	}{
		{"with its summary", 2048, true},
		{"no room for the summary", 16, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "stopped.mcap")
			rep := runLimited(t, path, end+tc.room)
			require.True(t, rep.StoppedByItself, "the recorder did not stop before Close: %+v", rep)
			require.Equal(t, "recording: "+path+": write: file too large", rep.Err)
			require.Equal(t, rep.Err, rep.CloseErr)
			want := recording.Stats{Recorded: kept, Dropped: stopMessages - kept}
			require.Equal(t, want, rep.AtStop)
			require.Equal(t, want, rep.Closed)

			var got [][]byte
			s, err := recording.Scan(path, func(m recording.Message) error {
				got = append(got, append([]byte(nil), m.Data...))
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, tc.complete, s.Complete, s.Damage)
			require.Equal(t, uint64(kept), s.Messages)
			require.Len(t, got, kept)
			for i, data := range got {
				require.Equal(t, stopPayload(i), data, "message %d", i)
			}
			require.Equal(t, map[string]string{"yaml": "nodes: []\n"}, s.Metadata["robotexec.config"])

			if tc.complete {
				checkIndexed(t, path, kept)
			}
			node := nodeReader(t)
			js := readJS(t, node, "stream.mjs", path)
			require.Equal(t, tc.complete, js.Complete)
			checkJS(t, js, kept)
			if !tc.complete {
				st, err := os.Stat(path)
				require.NoError(t, err)
				require.Equal(t, int64(end), st.Size(), "cut back to the end of the last complete chunk")
				return
			}
			checkJS(t, readJS(t, node, "read.mjs", path), kept)
		})
	}
}

// chunkEnd returns where the n-th chunk of the file at path ends, with
// its message indexes.
func chunkEnd(t *testing.T, path string, n int) uint64 {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rd, err := mcap.NewReader(f)
	require.NoError(t, err)
	info, err := rd.Info()
	require.NoError(t, err)
	require.Greater(t, len(info.ChunkIndexes), n)
	ci := info.ChunkIndexes[n-1]
	return ci.ChunkStartOffset + ci.ChunkLength + ci.MessageIndexLength
}

// runLimited runs the helper, recording to path under a file size limit.
func runLimited(t *testing.T, path string, limit uint64) helperReport {
	var rep helperReport
	runHelper(t, fmt.Sprintf("%s %d", path, limit), &rep)
	return rep
}

// runHelper runs the helper with spec and decodes its report into rep.
func runHelper(t *testing.T, spec string, rep any) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), limitedEnv+"="+spec)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	require.NoError(t, err, "the helper: %s", stderr.String())
	require.NoError(t, json.Unmarshal(out, rep), "%s", out)
}

// jsRead is what read.mjs and stream.mjs print.
type jsRead struct {
	MessageCount int  `json:"messageCount"`
	Complete     bool `json:"complete"`
	Messages     []struct {
		Topic, LogTime, Data string
	} `json:"messages"`
	Metadata map[string]map[string]string `json:"metadata"`
}

func readJS(t *testing.T, node, script, path string) jsRead {
	var js jsRead
	mcapjs.Read(t, node, mcapjsDir, script, path, &js)
	return js
}

// checkJS checks that the independent reader read the first n messages
// of the helper's recording, and its metadata.
func checkJS(t *testing.T, js jsRead, n int) {
	require.Equal(t, n, js.MessageCount)
	require.Len(t, js.Messages, n)
	for i, m := range js.Messages {
		data, err := base64.StdEncoding.DecodeString(m.Data)
		require.NoError(t, err)
		require.Equal(t, stopPayload(i), data, "message %d", i)
		require.Equal(t, strconv.FormatInt(stopTime(i).UnixNano(), 10), m.LogTime, "message %d", i)
	}
	require.Equal(t, map[string]string{"yaml": "nodes: []\n"}, js.Metadata["robotexec.config"])
}

// checkIndexed reads the file at path through its summary with the mcap
// library: its statistics and its indexes give n messages.
func checkIndexed(t *testing.T, path string, n int) {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rd, err := mcap.NewReader(f)
	require.NoError(t, err)
	info, err := rd.Info()
	require.NoError(t, err)
	require.Equal(t, uint64(n), info.Statistics.MessageCount)
	require.Len(t, info.ChunkIndexes, n)
	it, err := rd.Messages(mcap.UsingIndex(true))
	require.NoError(t, err)
	got := 0
	for {
		_, _, m, err := it.NextInto(nil)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		require.Equal(t, stopPayload(got), m.Data)
		got++
	}
	require.Equal(t, n, got)
}
