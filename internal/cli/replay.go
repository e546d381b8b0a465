package cli

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/robotexec/robotexec/internal/config"
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
	res, err := replayTo(l, cfg, logger, *outPath)
	if err != nil {
		fmt.Fprintln(stderr, "robotexec replay:", err)
		return ExitFailure
	}
	got := res.outputs
	span := l.stop.Sub(l.start)
	fmt.Fprintf(stderr, "robotexec replay: %d inputs, %d outputs on %d topics written to %s; %v of recording in %v (%.0fx real time)\n",
		len(l.inputs), count(got), len(got), *outPath, span.Round(time.Millisecond), res.took.Round(time.Millisecond), span.Seconds()/res.took.Seconds())
	if len(res.unrun) > 0 {
		fmt.Fprintf(stderr, "robotexec replay: as the recorded run, which stopped before running them, the replay did not run %s\n", describeUnrun(res.unrun))
	}
	if !*check {
		return ExitOK
	}
	if l.dropped != "" && l.dropped != "0" {
		fmt.Fprintf(stderr, "robotexec replay: the recorder dropped %s messages: the check may find differences\n", l.dropped)
	}
	if diff := compareOutputs(l.outputs, got); diff != "" {
		fmt.Fprintln(stderr, "robotexec replay -check:", diff)
		return ExitFailure
	}
	fmt.Fprintf(stderr, "robotexec replay -check: the outputs match: %d messages on %d topics\n", count(got), len(got))
	return ExitOK
}

// replayed is what a replay did.
type replayed struct {
	outputs map[string][]recorded // what the nodes published, by topic
	took    time.Duration
	unrun   map[runKey]int // runs not made, as in the recorded run
}

// replayTo replays l with cfg, writing the outputs to path. The first
// write error stops the replay: no more input is fed nor time passes, and
// the error says where the replay stopped and what the file holds.
func replayTo(l *runLog, cfg *config.Config, logger *slog.Logger, path string) (replayed, error) {
	w, err := recording.CreateWriter(path, recording.Options{})
	if err != nil {
		return replayed{}, err
	}
	got := map[string][]recorded{}
	var werr error
	out := func(node, topic string, payload []byte, at time.Time) {
		got[topic] = append(got[topic], recorded{topic: topic, node: node, at: at, payload: payload})
		if werr == nil {
			werr = w.WriteAs(recording.Output, node, topic, payload, at)
		}
	}
	began := time.Now()
	r, err := newReplayer(l, cfg, logger, out)
	if err != nil {
		w.Close()
		return replayed{}, err
	}
	fed, at := r.run(func() bool { return werr != nil })
	res := replayed{outputs: got, took: time.Since(began), unrun: r.unrun}
	st, err := w.Close()
	if werr != nil {
		return res, fmt.Errorf("%w; the replay stopped there, after %d of %d inputs and %v of %v of recording; %s holds the first %d outputs",
			werr, fed, len(l.inputs), at.Sub(l.start).Round(time.Millisecond), l.stop.Sub(l.start).Round(time.Millisecond), path, st.Recorded)
	}
	return res, err
}

// describeUnrun says which runs were not made, by node and callback, in
// name order: "2 of next's subscription pipe/1, 1 of wd's one-shot
// timeout".
func describeUnrun(unrun map[runKey]int) string {
	keys := slices.SortedFunc(maps.Keys(unrun), func(a, b runKey) int {
		return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.key, b.key))
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d of %s's %s", unrun[k], k.node, k.key)
	}
	return strings.Join(parts, ", ")
}

// compareOutputs compares the recorded outputs with the replayed ones,
// topic by topic in name order, and describes the first difference, or
// returns "".
func compareOutputs(want, got map[string][]recorded) string {
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
				return fmt.Sprintf("%s: message %d of %d differs:\n  recorded %s\n  replayed %s\n%s",
					t, i+1, len(w), w[i].payload, g[i].payload, notReplayable(g[i].node))
			}
		}
		switch {
		case len(g) < len(w):
			return fmt.Sprintf("%s: the recording has %d messages, the replay published %d; the first missing:\n  recorded %s\n%s",
				t, len(w), len(g), w[len(g)].payload, notReplayable(w[len(g)].node))
		case len(g) > len(w):
			return fmt.Sprintf("%s: the replay published %d messages, the recording has %d; the first extra:\n  replayed %s\n%s",
				t, len(g), len(w), g[len(w)].payload, notReplayable(g[len(w)].node))
		}
	}
	return ""
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
