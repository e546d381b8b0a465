package cli

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// probeBeat is what the replay_probe node publishes at each timer call.
type probeBeat struct {
	Handled  int       `json:"handled"`
	Expected time.Time `json:"expected"`
}

func init() {
	nodes.Register("replay_probe", "test node: counts its messages, publishes the count on its timer", func(n *nodes.Node) error {
		out := n.Publisher("out")
		handled := 0
		n.Subscribe("in", func(ctx context.Context, _ subscribers.Message) { handled++ })
		n.Timer(100*time.Millisecond, func(ctx context.Context, ev timers.Event) {
			_ = out.PublishJSON(ctx, probeBeat{Handled: handled, Expected: ev.Expected})
		}, executor.Name("beat"))
		return nil
	})
}

// TestReplayPlacesTimerCalls: each recorded timer call runs between the
// same messages of its node as recorded: later than its deadline when it
// followed messages that came after the deadline, at its deadline, and
// earlier when it preceded a message that comes before the deadline.
func TestReplayPlacesTimerCalls(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	key := timerKey{"probe", "beat"}
	l := &runLog{
		start: t0, stop: ms(400),
		inputs: []recorded{{topic: "in", at: ms(50)}, {topic: "in", at: ms(150)}, {topic: "in", at: ms(250)}},
		timers: map[timerKey][]app.TimerCall{key: {
			{Expected: ms(100), Handled: 2}, // late: after the message of 150 ms
			{Expected: ms(200), Handled: 2}, // at its deadline
			{Expected: ms(300), Handled: 2}, // early: before the message of 250 ms
			{Expected: ms(400), Handled: 3},
		}},
		nodeCalls: map[string][]callRef{"probe": {{key, 0}, {key, 1}, {key, 2}, {key, 3}}},
	}
	cfg, err := config.Parse("probe.yaml", []byte("nodes:\n  - { name: probe, type: replay_probe }\n"), nil)
	require.NoError(t, err)

	for range 2 { // the same twice
		var got []probeBeat
		var at []time.Time
		out := func(_, topic string, payload []byte, when time.Time) {
			var b probeBeat
			require.NoError(t, json.Unmarshal(payload, &b))
			got = append(got, b)
			at = append(at, when)
		}
		r, err := newReplayer(l, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), out)
		require.NoError(t, err)
		r.run(nil)
		require.Equal(t, []probeBeat{{2, ms(100)}, {2, ms(200)}, {2, ms(300)}, {3, ms(400)}}, got)
		require.Equal(t, []time.Time{ms(150), ms(200), ms(250), ms(400)}, at, "when each call ran")
	}
}

// TestCompareOutputsTail: a replay that publishes more or less at the end
// of a topic differs from the recording, as one that publishes another
// payload: there is no tolerance at the stop (the replay runs what the
// recorded run ran, see TestReplayStopsAsRecorded).
func TestCompareOutputsTail(t *testing.T) {
	msgs := func(payloads ...string) []recorded {
		var out []recorded
		for _, p := range payloads {
			out = append(out, recorded{topic: "t", node: "n", payload: []byte(p)})
		}
		return out
	}
	want := map[string][]recorded{"t": msgs("1", "2")}
	require.Empty(t, compareOutputs(want, map[string][]recorded{"t": msgs("1", "2")}))
	require.Contains(t, compareOutputs(want, map[string][]recorded{"t": msgs("1", "2", "3")}), "t: the replay published 3 messages, the recording has 2")
	for _, got := range []map[string][]recorded{{"t": msgs("1", "x")}, {"t": msgs("1")}, {"t": msgs("1", "2"), "u": msgs("1")}} {
		require.NotEmpty(t, compareOutputs(want, got), "%v", got)
	}
}
