package cli

// Tests of topic hz and topic bw watching a heartbeat on the embedded
// broker of a robotexec instance.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// reportsWithin bounds topic hz|bw -n 2: reports a second apart, after
// connecting.
const reportsWithin = quickExit + 2*time.Second

func TestTopicHzBw(t *testing.T) {
	t.Parallel()
	a := startApp(t, "cli-topic-rate", "  - { name: beat, type: heartbeat, params: { topic: rate/beat, period: 20ms } }\n")
	t.Run("hz -json", func(t *testing.T) {
		t.Parallel()
		r := startCLI("topic", "hz", "-broker", a.url, "-json", "-n", "2", "rate/+").wait(t, reportsWithin)
		require.Equal(t, ExitOK, r.code, "%s", r)
		require.Empty(t, r.stderr)
		ls := lines(r.stdout)
		require.Len(t, ls, 2, "-n 2: %s", r)
		for _, l := range ls {
			var rep hzReport
			dec := json.NewDecoder(strings.NewReader(l))
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(&rep), "report %q", l)
			require.Equal(t, "rate/+", rep.Topic)
			require.InDelta(t, 50, rep.RateHz, 40, "a beat every 20 ms, give or take a loaded machine")
			require.GreaterOrEqual(t, rep.Window, 2)
			require.LessOrEqual(t, rep.MinS, rep.MaxS)
		}
	})
	t.Run("bw", func(t *testing.T) {
		t.Parallel()
		r := startCLI("topic", "bw", "-broker", a.url, "-n", "1", "-window", "5", "rate/beat").wait(t, reportsWithin)
		require.Equal(t, ExitOK, r.code, "%s", r)
		require.Empty(t, r.stderr)
		require.Regexp(t, `^\d+(\.\d+)? (B|KB)/s from 5 messages\n\tMessage size mean: \d+(\.\d+)? B min: \d+ B max: \d+ B\n$`, r.stdout)
	})
}

// TestTopicRateNoMessage: without a message within -timeout, hz and bw
// exit 1 saying so; a retained message, old news, does not count.
func TestTopicRateNoMessage(t *testing.T) {
	t.Parallel()
	a := startApp(t, "cli-topic-quiet", "  - { name: beat, type: heartbeat, params: { topic: rate/beat, period: 1h } }\n")
	publish(t, pahoClient(t, a.url, "cli-topic-retainer"), "rate/kept", true, "old news")
	for _, kind := range []string{"hz", "bw"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			r := startCLI("topic", kind, "-broker", a.url, "-timeout", "1s", "rate/kept").wait(t, reportsWithin)
			require.Equal(t, ExitFailure, r.code, "%s", r)
			require.Empty(t, r.stdout, "no report of a retained message")
			require.Equal(t, "robotexec topic "+kind+`: no message on "rate/kept" within 1s`+"\n", r.stderr)
			require.GreaterOrEqual(t, time.Since(start), time.Second)
		})
	}
	t.Run("no broker", func(t *testing.T) {
		t.Parallel()
		r := cli(t, "topic", "hz", "-broker", unreachable(t), "-timeout", refusedWait, "rate/kept")
		require.Equal(t, ExitFailure, r.code, "%s", r)
		require.Contains(t, r.stderr, "robotexec topic hz: ")
		require.Contains(t, r.stderr, "connection refused")
	})
}
