package cli

// Tests of the replay at the recorded run's stop: a subscription runs the
// messages it ran in the recorded run and no more, a one-shot timer rings
// as often, so that replay -check is exact at the boundary.

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/recording"
)

// stopCase is a recorded run that ended at a boundary: inputs came, and
// the stop's record counts fewer runs than the replay would make.
type stopCase struct {
	name    string
	config  string
	inputs  []string          // on topic in, 10 ms apart from the start
	outputs map[string]string // by topic, as recorded: at most one each
	runs    app.Runs
	unrun   string // what the replay says it did not run
}

// TestReplayStopsAsRecorded: the recorded run's stop left an input unrun
// (its subscription had closed) and a one-shot timer unrung (the timers
// had stopped before its deadline came by the clock that the stop's time
// reads); the replay, fed every input and stepped to the stop's time, runs
// neither, so -check finds the outputs equal with no tolerance, and says
// what it did not run. Without the counts (a recording of a run that did
// not stop cleanly), the replay runs all and the check finds the extra
// message.
func TestReplayStopsAsRecorded(t *testing.T) {
	t.Parallel()
	for _, tc := range []stopCase{{
		name:    "a message that came while the run stopped",
		config:  "nodes:\n  - { name: relay, type: bridge, params: { from: in, to: out } }\n",
		inputs:  []string{`1`, `2`, `3`},
		outputs: map[string]string{"out": "1 2"},
		runs:    app.Runs{"relay": {"subscription bridge": 2}},
		unrun:   "1 of relay's subscription bridge",
	}, {
		name:   "a one-shot timer that never rang",
		config: "nodes:\n  - { name: wd, type: watchdog, params: { watch: in, timeout: 100ms, alarm: alarm } }\n",
		inputs: []string{`1`},
		runs:   app.Runs{"wd": {"subscription watch": 1, "one-shot timeout": 0}},
		unrun:  "1 of wd's one-shot timeout",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "run.mcap")
			stopRecording(t, path, tc, true)
			r := cli(t, "replay", "-check", "-o", filepath.Join(dir, "out.mcap"), path)
			require.Equal(t, ExitOK, r.code, "%s", r)
			require.Contains(t, r.stderr, "robotexec replay: as the recorded run, which stopped before running them, the replay did not run "+tc.unrun+"\n")
			require.Contains(t, r.stderr, "robotexec replay -check: the outputs match: ")

			counted := filepath.Join(dir, "uncounted.mcap")
			stopRecording(t, counted, tc, false)
			r = cli(t, "replay", "-check", "-o", filepath.Join(dir, "out2.mcap"), counted)
			require.Equal(t, ExitFailure, r.code, "%s", r)
			require.Contains(t, r.stderr, "the first extra:")
		})
	}
}

// stopRecording writes tc's recording to path: its inputs and outputs,
// and a stop 500 ms after the start, with tc's runs if withRuns.
func stopRecording(t *testing.T, path string, tc stopCase, withRuns bool) {
	t.Helper()
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	stop := map[string]string{"time": t0.Add(500 * time.Millisecond).Format(time.RFC3339Nano), "dropped": "0"}
	if withRuns {
		b, err := json.Marshal(tc.runs)
		require.NoError(t, err)
		stop["runs"] = string(b)
	}
	runRecording(t, path, map[string]map[string]string{
		app.MetaConfig: {"file": "config.yaml", "yaml": tc.config},
		app.MetaRun:    {"start": t0.Format(time.RFC3339Nano)},
		app.MetaStop:   stop,
	}, func(rec *recording.Recorder) {
		for i, in := range tc.inputs {
			at := t0.Add(time.Duration(i+1) * 10 * time.Millisecond)
			require.True(t, rec.RecordAs(recording.Input, "", "in", []byte(in), at))
		}
		for topic, payloads := range tc.outputs {
			for i, p := range strings.Fields(payloads) {
				at := t0.Add(time.Duration(i+1) * 10 * time.Millisecond)
				require.True(t, rec.RecordAs(recording.Output, "relay", topic, []byte(p), at))
			}
		}
	})
}
