package cli

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/config"

	// The node types of examples/config.yaml, which the stored run uses.
	_ "github.com/robotexec/robotexec/examples/imufilter"
	_ "github.com/robotexec/robotexec/examples/simsensor"
)

// storedRun is 5 s of examples/config.yaml recorded with robotexec run
// -record.
const storedRun = "testdata/replay/example-run.mcap"

// replayStored replays the stored run and returns its outputs by topic.
func replayStored(tb testing.TB, l *runLog, cfg *config.Config) map[string][]recorded {
	got := map[string][]recorded{}
	out := func(node, topic string, payload []byte, at time.Time) {
		got[topic] = append(got[topic], recorded{topic: topic, node: node, at: at, payload: payload})
	}
	r, err := newReplayer(l, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), out)
	require.NoError(tb, err)
	r.run(nil)
	return got
}

// TestReplayStoredRun: a run recorded with this code's example nodes and
// executor still replays to its outputs, message for message.
func TestReplayStoredRun(t *testing.T) {
	l, err := readRunLog(storedRun)
	require.NoError(t, err)
	cfg, err := l.loadConfig("")
	require.NoError(t, err)
	got := replayStored(t, l, cfg)
	diff := compareOutputs(l.outputs, got)
	require.Empty(t, diff)
	require.Greater(t, count(got), 1500)
}

// BenchmarkReplayExample replays the stored 5 s of examples/config.yaml;
// x_realtime is recorded time replayed per second.
func BenchmarkReplayExample(b *testing.B) {
	l, err := readRunLog(storedRun)
	require.NoError(b, err)
	cfg, err := l.loadConfig("")
	require.NoError(b, err)
	outputs := 0
	for b.Loop() {
		outputs = count(replayStored(b, l, cfg))
	}
	span := l.stop.Sub(l.start)
	b.ReportMetric(span.Seconds()*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
	b.ReportMetric(float64(outputs), "outputs/op")
}
