package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/robotexec/robotexec/internal/recording"
)

func cmdInfo(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("info", "[-json] FILE", "Print an MCAP file's topics, message counts, rates, first and last time and\nduration. A file whose recorder did not finish is read up to its last complete\nchunk.", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object")
	if done, code := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "robotexec info: want one FILE")
		fs.Usage()
		return ExitUsage
	}
	path := fs.Arg(0)
	s, err := recording.Scan(path, nil)
	if err != nil {
		fmt.Fprintln(stderr, "robotexec info:", err)
		return ExitUsage // not a readable MCAP file
	}
	if *asJSON {
		return printInfoJSON(stdout, stderr, path, s)
	}
	printInfo(stdout, path, s)
	return ExitOK
}

// infoTime formats a time for info, "-" for none.
func infoTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func printInfo(w io.Writer, path string, s *recording.Summary) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "file:\t%s\n", path)
	if !s.Complete {
		fmt.Fprintf(tw, "complete:\tno (%s): what follows is what its complete chunks hold\n", s.Damage)
	}
	fmt.Fprintf(tw, "messages:\t%d\n", s.Messages)
	fmt.Fprintf(tw, "start:\t%s\n", infoTime(s.Start))
	fmt.Fprintf(tw, "end:\t%s\n", infoTime(s.End))
	fmt.Fprintf(tw, "duration:\t%v\n", s.Duration())
	tw.Flush()
	if len(s.Channels) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tENCODING\tMESSAGES\tRATE (Hz)\tFIRST\tLAST")
	for _, c := range s.Channels {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%s\t%s\n", channelName(c), c.Encoding, c.Messages, c.Rate(), infoTime(c.First), infoTime(c.Last))
	}
	tw.Flush()
}

// infoJSON is info's -json output.
type infoJSON struct {
	File      string      `json:"file"`
	Complete  bool        `json:"complete"`
	Damage    string      `json:"damage,omitempty"`
	Messages  uint64      `json:"messages"`
	Start     *time.Time  `json:"start"`
	End       *time.Time  `json:"end"`
	DurationS float64     `json:"duration_s"`
	Topics    []topicJSON `json:"topics"`
}

// channelName is a channel's topic, with its role and node in a run's
// recording: "robot/cmd (output of planner)".
func channelName(c recording.Channel) string {
	switch {
	case c.Role == recording.Plain:
		return c.Topic
	case c.Node != "":
		return fmt.Sprintf("%s (%s of %s)", c.Topic, c.Role, c.Node)
	default:
		return fmt.Sprintf("%s (%s)", c.Topic, c.Role)
	}
}

type topicJSON struct {
	Topic    string    `json:"topic"`
	Role     string    `json:"role,omitempty"`
	Node     string    `json:"node,omitempty"`
	Encoding string    `json:"encoding"`
	Messages uint64    `json:"messages"`
	RateHz   float64   `json:"rate_hz"`
	First    time.Time `json:"first"`
	Last     time.Time `json:"last"`
}

func printInfoJSON(stdout, stderr io.Writer, path string, s *recording.Summary) int {
	out := infoJSON{File: path, Complete: s.Complete, Damage: s.Damage, Messages: s.Messages,
		DurationS: s.Duration().Seconds(), Topics: []topicJSON{}}
	if !s.Start.IsZero() {
		out.Start, out.End = &s.Start, &s.End
	}
	for _, c := range s.Channels {
		out.Topics = append(out.Topics, topicJSON{c.Topic, string(c.Role), c.Node, c.Encoding, c.Messages, c.Rate(), c.First, c.Last})
	}
	b, err := json.Marshal(out)
	if err != nil {
		fmt.Fprintln(stderr, "robotexec info:", err)
		return ExitFailure
	}
	fmt.Fprintln(stdout, string(b))
	return ExitOK
}
