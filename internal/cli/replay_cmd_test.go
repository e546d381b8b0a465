package cli

// Tests of the replay command: the stored run of examples/config.yaml
// (see replay_bench_test.go) replayed with -check as recorded and with its
// config changed, and recordings that are not runs' recordings.

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/recording"
)

// storedConfig returns the config stored in the stored run.
func storedConfig(t *testing.T) string {
	t.Helper()
	l, err := readRunLog(storedRun)
	require.NoError(t, err)
	require.NotNil(t, l.config)
	return string(l.config)
}

// TestReplayCheck: the stored run replays with -check to its outputs; the
// replay's outputs go to -o, or beside the recording.
func TestReplayCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.mcap")
	r := cli(t, "replay", "-check", "-o", out, storedRun)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Empty(t, r.stdout)
	m := regexp.MustCompile(`robotexec replay: 0 inputs, (\d+) outputs on 6 topics written to ` + regexp.QuoteMeta(out) +
		`; 4\.981s of recording in \S+ \(\S+x real time\)\n` +
		`robotexec replay -check: the outputs match: (\d+) messages on 6 topics\n$`).FindStringSubmatch(r.stderr)
	require.NotNil(t, m, "%s", r)
	require.Equal(t, m[1], m[2])
	in := infoJSONOf(t, out)
	require.True(t, in.Complete)
	require.Equal(t, m[1], strconv.Itoa(in.Messages))
	for _, tp := range in.Topics {
		require.Equal(t, "output", tp.Role, tp.Topic)
	}

	// Without -o, the outputs go beside the recording; without -check,
	// nothing is compared.
	copied := filepath.Join(dir, "run.mcap")
	data, err := os.ReadFile(storedRun)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(copied, data, 0o644))
	r = cli(t, "replay", "-log-level", "error", copied)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Contains(t, r.stderr, "written to "+filepath.Join(dir, "run.replay.mcap")+";")
	require.NotContains(t, r.stderr, "-check")
	require.Equal(t, in.Messages, infoJSONOf(t, filepath.Join(dir, "run.replay.mcap")).Messages)
}

// TestReplayChanged: with a config that differs from the recorded run,
// -check exits 1 on the first difference, naming the topic, the message
// and the node.
func TestReplayChanged(t *testing.T) {
	t.Parallel()
	text := storedConfig(t)
	heartbeat := "  - name: heartbeat\n    type: heartbeat\n    params: { topic: robot/heartbeat, period: 1s }\n"
	require.Contains(t, text, heartbeat)
	for _, tc := range []struct {
		name, config string
		want         []string
	}{
		{"a param changed", strings.Replace(text, "alpha: 0.1", "alpha: 0.2", 1), []string{
			"robotexec replay -check: robot/imu0/filtered: message 1 of 49 differs:\n  recorded {",
			"\n  replayed {",
			`node "imu_filter" is not replayable, or differs from the recorded run (see docs/recording.md: Replayable nodes)`,
		}},
		{"a node added", text + "  - { name: extra, type: heartbeat, params: { topic: robot/extra, period: 500ms } }\n", []string{
			"robotexec replay -check: robot/extra: the replay published ",
			" messages, the recording has 0; the first extra:\n  replayed {",
			`node "extra" is not replayable`,
		}},
		{"a node removed", strings.Replace(text, heartbeat, "", 1), []string{
			"robotexec replay -check: robot/heartbeat: the recording has 4 messages, the replay published 0; the first missing:\n  recorded {",
			`node "heartbeat" is not replayable`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			config := filepath.Join(dir, "config.yaml")
			writeFile(t, config, tc.config)
			r := cli(t, "replay", "-check", "-o", filepath.Join(dir, "out.mcap"), storedRun, config)
			require.Equal(t, ExitFailure, r.code, "%s", r)
			require.Empty(t, r.stdout)
			for _, w := range tc.want {
				require.Contains(t, r.stderr, w)
			}
		})
	}
}

// runRecording writes a recording with the metadata of a run's recording
// (nil values are left out) and a heartbeat's config.
func runRecording(t *testing.T, path string, meta map[string]map[string]string, messages func(*recording.Recorder)) {
	t.Helper()
	rec, err := recording.Create(path, recording.Options{})
	require.NoError(t, err)
	for name, values := range meta {
		if values != nil {
			require.True(t, rec.Metadata(name, values))
		}
	}
	if messages != nil {
		messages(rec)
	}
	_, err = rec.Close()
	require.NoError(t, err)
}

// TestReplayDropped: the check of a recording whose recorder dropped
// messages warns that it may find differences.
func TestReplayDropped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "run.mcap")
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	runRecording(t, path, map[string]map[string]string{
		app.MetaConfig: {"file": "hb.yaml", "yaml": "nodes:\n  - { name: beat, type: heartbeat, params: { topic: hb, period: 1h } }\n"},
		app.MetaRun:    {"start": t0.Format(time.RFC3339Nano)},
		app.MetaStop:   {"time": t0.Add(time.Second).Format(time.RFC3339Nano), "dropped": "3"},
	}, nil)
	r := cli(t, "replay", "-check", "-o", filepath.Join(dir, "out.mcap"), path)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Contains(t, r.stderr, "robotexec replay: 0 inputs, 0 outputs on 0 topics written to ")
	require.Contains(t, r.stderr, "; 1s of recording in ")
	require.Contains(t, r.stderr, "robotexec replay: the recorder dropped 3 messages: the check may find differences\n")
	require.Contains(t, r.stderr, "the outputs match: 0 messages on 0 topics\n")
}

func TestReplayErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).Format(time.RFC3339Nano)
	hb := map[string]string{"file": "hb.yaml", "yaml": "nodes:\n  - { name: beat, type: heartbeat, params: { topic: hb, period: 1h } }\n"}
	file := func(name string, meta map[string]map[string]string, messages func(*recording.Recorder)) string {
		path := filepath.Join(dir, name)
		runRecording(t, path, meta, messages)
		return path
	}
	plain := file("plain.mcap", nil, func(r *recording.Recorder) { r.Record("a", []byte("x"), time.Now()) })
	noConfig := file("noconfig.mcap", map[string]map[string]string{app.MetaRun: {"start": t0}}, nil)
	badStart := file("badstart.mcap", map[string]map[string]string{app.MetaConfig: hb, app.MetaRun: {"start": "soon"}}, nil)
	badStop := file("badstop.mcap", map[string]map[string]string{app.MetaConfig: hb, app.MetaRun: {"start": t0}, app.MetaStop: {"time": "later"}}, nil)
	badRuns := file("badruns.mcap", map[string]map[string]string{app.MetaConfig: hb, app.MetaRun: {"start": t0}, app.MetaStop: {"time": t0, "runs": "[1]"}}, nil)
	badCall := file("badcall.mcap", map[string]map[string]string{app.MetaConfig: hb, app.MetaRun: {"start": t0}}, func(r *recording.Recorder) {
		r.RecordAs(recording.TimerCall, "beat", "timer(1h)", []byte("not json"), time.Now())
	})
	badStored := file("badstored.mcap", map[string]map[string]string{
		app.MetaConfig: {"file": "bad.yaml", "yaml": "nodes:\n  - { name: beat, type: heartbeat }\n"}, app.MetaRun: {"start": t0}}, nil)
	brokenStored := file("brokenstored.mcap", map[string]map[string]string{
		app.MetaConfig: {"file": "broken.yaml", "yaml": "nodes: [\n"}, app.MetaRun: {"start": t0}}, nil)
	badConfig := filepath.Join(dir, "bad.yaml")
	writeFile(t, badConfig, "nodes:\n  - { name: beat, type: heartbeat, params: { period: fast } }\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no recording", nil, ExitUsage, "robotexec replay: want RECORDING and at most one CONFIG\nUsage: robotexec replay"},
		{"three arguments", []string{storedRun, badConfig, badConfig}, ExitUsage, "robotexec replay: want RECORDING and at most one CONFIG"},
		{"bad -log-level", []string{"-log-level", "chatty", storedRun}, ExitUsage, `robotexec replay: -log-level "chatty": want debug, info, warn or error`},
		{"missing", []string{plain + ".none"}, ExitUsage, "no such file or directory"},
		{"not a run", []string{plain}, ExitUsage, plain + `: not a recording of robotexec run -record (no "robotexec.run" metadata)`},
		{"no config stored", []string{noConfig}, ExitUsage, noConfig + ": no config stored: give a CONFIG"},
		{"bad start", []string{badStart}, ExitUsage, badStart + ": robotexec.run: start: "},
		{"bad stop", []string{badStop}, ExitUsage, badStop + ": robotexec.stop: time: "},
		{"bad runs", []string{badRuns}, ExitUsage, badRuns + ": robotexec.stop: runs: "},
		{"bad timer call", []string{badCall}, ExitUsage, badCall + ": timer call of beat/timer(1h): "},
		{"bad stored config", []string{badStored}, ExitUsage, "bad.yaml (stored " + badStored + "):2: nodes[0]: beat (heartbeat): topic is required"},
		{"broken stored config", []string{brokenStored}, ExitUsage, "broken.yaml (stored " + brokenStored + "):"},
		{"bad CONFIG", []string{storedRun, badConfig}, ExitUsage, badConfig + `:2: nodes[0].params.period: "fast" is not a duration`},
		{"-o in no directory", []string{"-o", filepath.Join(dir, "none", "out.mcap"), storedRun}, ExitFailure, "robotexec replay: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := cli(t, append([]string{"replay"}, tc.args...)...)
			require.Equal(t, tc.code, r.code, "%s", r)
			require.Empty(t, r.stdout)
			require.Contains(t, r.stderr, tc.want)
		})
	}
}
