package cli

// Tests of the replay at the recorded run's stop: a subscription runs the
// messages it ran in the recorded run and no more, a one-shot timer is
// called at no deadline after its last recorded call, so that replay
// -check is exact at the boundary.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/recording"
)

var stopT0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// ms returns the time n ms after stopT0.
func stopMs(n int) time.Time { return stopT0.Add(time.Duration(n) * time.Millisecond) }

// stopMsg is a recorded input or output.
type stopMsg struct {
	topic, payload string
	at             int // ms after stopT0
}

// stopCase is a recorded run that ended at a boundary: the stop's record
// says what the subscriptions and the one-shot timers ran.
type stopCase struct {
	name            string
	config          string
	inputs, outputs []stopMsg // the outputs are node out's
	runs            app.Runs
	unrun           string // what the replay says it did not run; "" for nothing
	uncountedFails  bool   // whether the replay without the stop's runs fails the check
}

// alarm is a watchdog alarm's payload.
func alarm(topic, state string, seen int) string {
	return fmt.Sprintf(`{"topic":%q,"state":%q,"last_seen":%q}`, topic, state, stopMs(seen).Format(time.RFC3339Nano))
}

const stopWatchdog = "nodes:\n  - { name: out, type: watchdog, params: { watch: 'in/+', timeout: 100ms, alarm: alarm } }\n"

// TestReplayStopsAsRecorded: a recorded run's stop left an input unrun
// (its subscription had closed) or a one-shot timer uncalled (the timers
// had stopped before its deadline, which the clock passed while the run
// drained); the replay, fed every input and stepped to the stop's time,
// runs neither, so -check finds the outputs equal with no tolerance, and
// says what it did not run. A one-shot timer that the run called late,
// once for two deadlines, is called for both in the replay, up to the
// time of its last call. Without the stop's runs (a recording of a run
// that did not stop cleanly), the replay runs all and the check fails.
func TestReplayStopsAsRecorded(t *testing.T) {
	t.Parallel()
	for _, tc := range []stopCase{{
		name:           "a message that came while the run stopped",
		config:         "nodes:\n  - { name: out, type: bridge, params: { from: in/a, to: out } }\n",
		inputs:         []stopMsg{{"in/a", "1", 10}, {"in/a", "2", 20}, {"in/a", "3", 30}},
		outputs:        []stopMsg{{"out", "1", 10}, {"out", "2", 20}},
		runs:           app.Runs{"out": {"subscription bridge": {Runs: 2}}},
		unrun:          "1 of out's subscription bridge",
		uncountedFails: true,
	}, {
		name:           "a one-shot timer never called",
		config:         stopWatchdog,
		inputs:         []stopMsg{{"in/a", "1", 10}},
		runs:           app.Runs{"out": {"subscription watch": {Runs: 1}, "one-shot timeout": {}}},
		unrun:          "1 of out's one-shot timeout",
		uncountedFails: true,
	}, {
		name:    "a one-shot timer called, then armed at the stop",
		config:  stopWatchdog,
		inputs:  []stopMsg{{"in/a", "1", 10}, {"in/a", "2", 200}},
		outputs: []stopMsg{{"alarm", alarm("in/a", "stale", 10), 111}, {"alarm", alarm("in/a", "ok", 200), 200}},
		runs: app.Runs{"out": {"subscription watch": {Runs: 2},
			"one-shot timeout": {Runs: 1, Last: stopMs(111)}}},
		unrun:          "1 of out's one-shot timeout",
		uncountedFails: true,
	}, {
		name:    "a one-shot timer called late, once for two deadlines",
		config:  stopWatchdog,
		inputs:  []stopMsg{{"in/a", "1", 10}, {"in/b", "1", 12}},
		outputs: []stopMsg{{"alarm", alarm("in/a", "stale", 10), 115}, {"alarm", alarm("in/b", "stale", 12), 115}},
		runs: app.Runs{"out": {"subscription watch": {Runs: 2},
			"one-shot timeout": {Runs: 1, Last: stopMs(115)}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "run.mcap")
			stopRecording(t, path, tc, true)
			r := cli(t, "replay", "-check", "-o", filepath.Join(dir, "out.mcap"), path)
			require.Equal(t, ExitOK, r.code, "%s", r)
			const did = "robotexec replay: as the recorded run, which stopped before running them, the replay did not run "
			if tc.unrun != "" {
				require.Contains(t, r.stderr, did+tc.unrun+"\n")
			} else {
				require.NotContains(t, r.stderr, did)
			}
			require.Contains(t, r.stderr, "robotexec replay -check: the outputs match: ")

			uncounted := filepath.Join(dir, "uncounted.mcap")
			stopRecording(t, uncounted, tc, false)
			r = cli(t, "replay", "-check", "-o", filepath.Join(dir, "out2.mcap"), uncounted)
			if tc.uncountedFails {
				require.Equal(t, ExitFailure, r.code, "%s", r)
				require.Contains(t, r.stderr, "the first extra:")
			} else {
				require.Equal(t, ExitOK, r.code, "%s", r)
			}
		})
	}
}

// stopRecording writes tc's recording to path: its inputs and outputs,
// and a stop 500 ms after the start, with tc's runs if withRuns.
func stopRecording(t *testing.T, path string, tc stopCase, withRuns bool) {
	t.Helper()
	stop := map[string]string{"time": stopMs(500).Format(time.RFC3339Nano), "dropped": "0"}
	if withRuns {
		b, err := json.Marshal(tc.runs)
		require.NoError(t, err)
		stop["runs"] = string(b)
	}
	runRecording(t, path, map[string]map[string]string{
		app.MetaConfig: {"file": "config.yaml", "yaml": tc.config},
		app.MetaRun:    {"start": stopT0.Format(time.RFC3339Nano)},
		app.MetaStop:   stop,
	}, func(rec *recording.Recorder) {
		for _, m := range tc.inputs {
			require.True(t, rec.RecordAs(recording.Input, "", m.topic, []byte(m.payload), stopMs(m.at)))
		}
		for _, m := range tc.outputs {
			require.True(t, rec.RecordAs(recording.Output, "out", m.topic, []byte(m.payload), stopMs(m.at)))
		}
	})
}
