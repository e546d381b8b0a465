package cli

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/internal/recording"
)

func cmdReplay(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("replay", "[flags] RECORDING [CONFIG]", "Re-run the nodes of CONFIG (default: the config stored in RECORDING, made by\nrobotexec run -record) offline, on a simulated clock, fed the recording's inputs\nat their recorded times, and write what the nodes publish to an MCAP file.", stderr)
	check := fs.Bool("check", false, "compare, topic by topic, what the nodes publish with the recording's outputs; exit 1 on the first difference")
	outPath := fs.String("o", "", "write the nodes' publications to `FILE` (default: RECORDING with .replay.mcap)")
	logLevel := fs.String("log-level", "warn", "the nodes' log level: debug, info, warn or error")
	if done, code := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprintln(stderr, "robotexec replay: want RECORDING and at most one CONFIG")
		fs.Usage()
		return ExitUsage
	}
	logger, err := newLogger(stderr, "text", *logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "robotexec replay:", err)
		return ExitUsage
	}
	l, err := readRunLog(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "robotexec replay:", err)
		return ExitUsage
	}
	cfg, err := l.loadConfig(fs.Arg(1))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return ExitUsage
	}
	if *outPath == "" {
		*outPath = strings.TrimSuffix(l.path, ".mcap") + ".replay.mcap"
	}
	got, took, err := replayTo(l, cfg, logger, *outPath)
	if err != nil {
		fmt.Fprintln(stderr, "robotexec replay:", err)
		return ExitFailure
	}
	span := l.stop.Sub(l.start)
	fmt.Fprintf(stderr, "robotexec replay: %d inputs, %d outputs on %d topics written to %s; %v of recording in %v (%.0fx real time)\n",
		len(l.inputs), count(got), len(got), *outPath, span.Round(time.Millisecond), took.Round(time.Millisecond), span.Seconds()/took.Seconds())
	if !*check {
		return ExitOK
	}
	if l.dropped != "" && l.dropped != "0" {
		fmt.Fprintf(stderr, "robotexec replay: the recorder dropped %s messages: the check may find differences\n", l.dropped)
	}
	extra, diff := compareOutputs(l.outputs, got, l.refused)
	if diff != "" {
		fmt.Fprintln(stderr, "robotexec replay -check:", diff)
		return ExitFailure
	}
	if extra > 0 {
		fmt.Fprintf(stderr, "robotexec replay -check: the run's subscriptions refused %d messages while it stopped; the replay, which delivers them, published %d more at the end\n", l.refused, extra)
	}
	fmt.Fprintf(stderr, "robotexec replay -check: the outputs match: %d messages on %d topics\n", count(got)-extra, len(got))
	return ExitOK
}

// replayTo replays l with cfg, writing the outputs to path; it returns
// them by topic and how long the replay took.
func replayTo(l *runLog, cfg *config.Config, logger *slog.Logger, path string) (map[string][]recorded, time.Duration, error) {
	rec, err := recording.Create(path, recording.Options{})
	if err != nil {
		return nil, 0, err
	}
	got := map[string][]recorded{}
	out := func(node, topic string, payload []byte, at time.Time) {
		got[topic] = append(got[topic], recorded{topic: topic, node: node, at: at, payload: payload})
		rec.RecordAs(recording.Output, node, topic, payload, at)
	}
	began := time.Now()
	r, err := newReplayer(l, cfg, logger, out)
	if err != nil {
		rec.Close()
		return nil, 0, err
	}
	r.run()
	took := time.Since(began)
	st, err := rec.Close()
	if err == nil && st.Dropped > 0 {
		err = fmt.Errorf("%s: %d outputs not written (the writer's queue was full)", path, st.Dropped)
	}
	return got, took, err
}

// compareOutputs compares the recorded outputs with the replayed ones,
// topic by topic in name order, and describes the first difference, or
// returns "". When the run refused messages while it stopped (refused),
// the replay, which delivers them, may publish up to as many more on a
// topic after its recorded messages, if it has any: extra counts those.
func compareOutputs(want, got map[string][]recorded, refused int) (extra int, diff string) {
	topics := make([]string, 0, len(want)+len(got))
	for t := range want {
		topics = append(topics, t)
	}
	for t := range got {
		if _, ok := want[t]; !ok {
			topics = append(topics, t)
		}
	}
	slices.Sort(topics)
	for _, t := range topics {
		w, g := want[t], got[t]
		for i := range min(len(w), len(g)) {
			if !bytes.Equal(w[i].payload, g[i].payload) {
				return extra, fmt.Sprintf("%s: message %d of %d differs:\n  recorded %s\n  replayed %s\n%s",
					t, i+1, len(w), w[i].payload, g[i].payload, notReplayable(g[i].node))
			}
		}
		switch {
		case len(g) < len(w):
			return extra, fmt.Sprintf("%s: the recording has %d messages, the replay published %d; the first missing:\n  recorded %s\n%s",
				t, len(w), len(g), w[len(g)].payload, notReplayable(w[len(g)].node))
		case len(g) > len(w) && len(w) > 0 && len(g)-len(w) <= refused:
			extra += len(g) - len(w)
		case len(g) > len(w):
			return extra, fmt.Sprintf("%s: the replay published %d messages, the recording has %d; the first extra:\n  replayed %s\n%s",
				t, len(g), len(w), g[len(w)].payload, notReplayable(g[len(w)].node))
		}
	}
	return extra, ""
}

// notReplayable names the node behind a difference.
func notReplayable(node string) string {
	return fmt.Sprintf("node %q is not replayable, or differs from the recorded run (see docs/recording.md: Replayable nodes)", node)
}

// count counts the messages of outputs.
func count(outputs map[string][]recorded) int {
	n := 0
	for _, o := range outputs {
		n += len(o)
	}
	return n
}
