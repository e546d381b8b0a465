package robotexec_test

// End-to-end tests of robotexec replay writing its output onto a file
// that cannot take it: a full device (/dev/full, whose writes fail with
// ENOSPC) and a file size limit (RLIMIT_FSIZE, set with bash's ulimit, as
// the recording tests do: see recordfull_cli_test.go).

import (
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/recording"
)

// relayInputs is how many 2 KiB inputs relayRecording holds: their
// outputs (6 MiB, which zstd cannot shrink) are three times the size limit.
const relayInputs = 3000

// relayRecording writes, at path, the recording of a run of a relay (in →
// out) fed relayInputs messages of 2 KiB of random bytes, 1 ms apart.
func relayRecording(t *testing.T, path string) {
	t.Helper()
	rec, err := recording.Create(path, recording.Options{})
	require.NoError(t, err)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	rec.Metadata(app.MetaConfig, map[string]string{"file": "relay.yaml",
		"yaml": "nodes:\n  - { name: relay, type: bridge, params: { from: in, to: out } }\n"})
	rec.Metadata(app.MetaRun, map[string]string{"start": t0.Format(time.RFC3339Nano)})
	rng := rand.New(rand.NewPCG(44, 7))
	for i := range relayInputs {
		payload := make([]byte, 2048)
		for j := range payload {
			payload[j] = byte(rng.Uint32())
		}
		require.True(t, rec.RecordAs(recording.Input, "", "in", payload, t0.Add(time.Duration(i+1)*time.Millisecond)))
	}
	end := t0.Add((relayInputs + 1) * time.Millisecond)
	rec.Metadata(app.MetaStop, map[string]string{"time": end.Format(time.RFC3339Nano), "dropped": "0"})
	st, err := rec.Close()
	require.NoError(t, err)
	require.Equal(t, recording.Stats{Recorded: relayInputs}, st)
}

// TestReplayWriteError: replay onto a file that reaches its size limit
// stops at the first write error: it feeds no more inputs, exits 1, and
// says so in one line naming the file and the cause, where the replay
// stopped, and how many outputs the file holds, which info finds there.
// Onto /dev/full it fails at once, before any node runs.
func TestReplayWriteError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "relay.mcap")
	relayRecording(t, path)

	full := runCmd(t, quickExit, robotexecBin, nil, "replay", "-check", "-o", "/dev/full", path)
	require.Equal(t, 1, full.code, "%s", full)
	require.Equal(t, "robotexec replay: recording: /dev/full: write: no space left on device\n", full.stderr)

	out := filepath.Join(dir, "out.mcap")
	bin, args := limited(t, "replay", "-check", "-o", out, path)
	r := runCmd(t, quickExit, bin, nil, args...)
	require.Equal(t, 1, r.code, "%s", r)
	m := regexp.MustCompile(`^robotexec replay: recording: ` + regexp.QuoteMeta(out) + `: write: file too large; ` +
		`the replay stopped there, after (\d+) of 3000 inputs and (\S+) of 3.001s of recording; ` +
		regexp.QuoteMeta(out) + ` holds the first (\d+) outputs\n$`).FindStringSubmatch(r.stderr)
	require.NotNil(t, m, "%s", r)
	fed, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	// The limit (2 MiB) takes one 1 MiB chunk of outputs, about 500: the
	// second fails when it is full, about 1,000 inputs in, and the replay
	// stops at the next step.
	require.Less(t, fed, relayInputs/2, "the replay carried on after the error")
	held, err := strconv.Atoi(m[3])
	require.NoError(t, err)
	require.Positive(t, held, "the file holds its first chunk")
	require.Less(t, held, fed)
	require.Equal(t, (time.Duration(fed) * time.Millisecond).String(), m[2], "an input a millisecond")
	in := readInfo(t, out)
	require.True(t, in.Complete, "closed with its summary")
	require.Equal(t, held, in.Messages)
}
