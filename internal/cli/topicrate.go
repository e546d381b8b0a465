package cli

// robotexec topic hz and topic bw: a topic's message rate and bandwidth,
// printed once a second as ros2 topic hz and ros2 topic bw print them.
// Both keep the arrival time and payload size of the last -window messages
// in a rateWindow; the reports are pure functions of that window.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// rateSample is one message of a window: when it reached this process and
// its payload's size in bytes.
type rateSample struct {
	at   time.Time
	size int
}

// rateWindow holds the last max messages of a topic, oldest first, in a
// ring that grows to max as messages arrive.
type rateWindow struct {
	max  int
	ring []rateSample
	next int    // where the next sample goes, once the ring is full
	seen uint64 // messages ever added
}

func newRateWindow(max int) *rateWindow { return &rateWindow{max: max} }

// add records a message that arrived at at with size payload bytes,
// evicting the oldest when the window is full.
func (w *rateWindow) add(at time.Time, size int) {
	w.seen++
	if len(w.ring) < w.max {
		w.ring = append(w.ring, rateSample{at, size})
		return
	}
	w.ring[w.next] = rateSample{at, size}
	w.next = (w.next + 1) % w.max
}

// len returns the number of messages in the window.
func (w *rateWindow) len() int { return len(w.ring) }

// sample returns the i-th oldest message of the window.
func (w *rateWindow) sample(i int) rateSample {
	return w.ring[(w.next+i)%len(w.ring)]
}

// span returns the time from the window's first message to its last, and
// false when it is not positive or there are fewer than two messages.
func (w *rateWindow) span() (time.Duration, bool) {
	if w.len() < 2 {
		return 0, false
	}
	d := w.sample(w.len() - 1).at.Sub(w.sample(0).at)
	return d, d > 0
}

// hzReport is a report of topic hz: the rate and the spread of the
// intervals between the window's consecutive messages.
type hzReport struct {
	Topic   string  `json:"topic"`
	RateHz  float64 `json:"rate_hz"`   // 1 / the mean interval
	MinS    float64 `json:"min_s"`     // shortest interval, seconds
	MaxS    float64 `json:"max_s"`     // longest interval, seconds
	StdDevS float64 `json:"std_dev_s"` // population standard deviation, seconds
	Window  int     `json:"window"`    // messages in the window (intervals + 1)
}

// hz reports on the window's intervals; false when it has fewer than two
// messages or they span no time. As in ros2, the standard deviation
// divides by the number of intervals (the population's, not the
// sample's). The sums are in nanoseconds, so that round intervals give
// round figures.
func (w *rateWindow) hz(topic string) (hzReport, bool) {
	span, ok := w.span()
	if !ok {
		return hzReport{}, false
	}
	k := float64(w.len() - 1)
	mean := float64(span) / k
	lo, hi := time.Duration(math.MaxInt64), time.Duration(math.MinInt64)
	var sq float64
	for i := 1; i < w.len(); i++ {
		d := w.sample(i).at.Sub(w.sample(i - 1).at)
		lo, hi = min(lo, d), max(hi, d)
		sq += (float64(d) - mean) * (float64(d) - mean)
	}
	return hzReport{
		Topic:   topic,
		RateHz:  1e9 / mean,
		MinS:    lo.Seconds(),
		MaxS:    hi.Seconds(),
		StdDevS: math.Sqrt(sq/k) / 1e9,
		Window:  w.len(),
	}, true
}

// String formats r as ros2 topic hz does.
func (r hzReport) String() string {
	return fmt.Sprintf("average rate: %.3f\n\tmin: %.3fs max: %.3fs std dev: %.5fs window: %d\n",
		r.RateHz, r.MinS, r.MaxS, r.StdDevS, r.Window)
}

// bwReport is a report of topic bw: bytes per second and message sizes.
type bwReport struct {
	Topic     string  `json:"topic"`
	BytesPerS float64 `json:"bytes_per_s"`
	Messages  int     `json:"messages"` // in the window
	MeanB     float64 `json:"mean_b"`
	MinB      int     `json:"min_b"`
	MaxB      int     `json:"max_b"`
}

// bw reports on the window's payload sizes; false as for hz. Bytes per
// second are the bytes that arrived during the window's span — those of
// every message but the first, which opens the span — divided by the span
// from its first message to its last. Unlike ros2, which divides all the
// bytes by the time from the first message to the report, this does not
// count one message too many, nor does it change with the moment of the
// report; it is hz's rate times the mean size of those messages.
func (w *rateWindow) bw(topic string) (bwReport, bool) {
	span, ok := w.span()
	if !ok {
		return bwReport{}, false
	}
	r := bwReport{Topic: topic, Messages: w.len(), MinB: math.MaxInt, MaxB: -1}
	total := 0
	for i := range w.len() {
		s := w.sample(i).size
		total += s
		r.MinB, r.MaxB = min(r.MinB, s), max(r.MaxB, s)
	}
	r.BytesPerS = float64(total-w.sample(0).size) / span.Seconds()
	r.MeanB = float64(total) / float64(w.len())
	return r, true
}

// String formats r as ros2 topic bw does, each figure in its own unit.
func (r bwReport) String() string {
	return fmt.Sprintf("%s/s from %d messages\n\tMessage size mean: %s min: %s max: %s\n",
		byteUnits(r.BytesPerS), r.Messages, byteUnits(r.MeanB), byteUnits(float64(r.MinB)), byteUnits(float64(r.MaxB)))
}

// byteUnits formats n bytes as ros2 topic bw does: B below 1000, then KB
// and MB in powers of 1000 (not 1024), with two decimals; bytes drop
// trailing zeros, so that a whole size reads "12 B".
func byteUnits(n float64) string {
	switch {
	case n < 1e3:
		s := strconv.FormatFloat(n, 'f', 2, 64)
		return strings.TrimSuffix(strings.TrimRight(s, "0"), ".") + " B"
	case n < 1e6:
		return fmt.Sprintf("%.2f KB", n/1e3)
	default:
		return fmt.Sprintf("%.2f MB", n/1e6)
	}
}

// rateKind is what topic hz and topic bw differ in.
type rateKind struct {
	name, summary string
	report        func(w *rateWindow, topic string) (fmt.Stringer, bool)
}

var hzKind = rateKind{
	name: "hz",
	summary: "Print the message rate of the topics matching TOPIC once a second: the mean\n" +
		"rate over the last -window messages, and the min, max and standard deviation\n" +
		"of the intervals between them.",
	report: func(w *rateWindow, topic string) (fmt.Stringer, bool) { return w.hz(topic) },
}

var bwKind = rateKind{
	name: "bw",
	summary: "Print the bandwidth of the topics matching TOPIC once a second: bytes per\n" +
		"second over the last -window messages, and the mean, min and max payload\n" +
		"size (B, KB = 1000 B, MB = 1000 KB).",
	report: func(w *rateWindow, topic string) (fmt.Stringer, bool) { return w.bw(topic) },
}

func cmdTopicHz(args []string, stdout, stderr io.Writer) int {
	return runRate(hzKind, args, stdout, stderr)
}

func cmdTopicBw(args []string, stdout, stderr io.Writer) int {
	return runRate(bwKind, args, stdout, stderr)
}

// formatReport returns r as text, or as one line of JSON.
func formatReport(r fmt.Stringer, asJSON bool) string {
	if !asJSON {
		return r.String()
	}
	b, err := json.Marshal(r)
	if err != nil { // the reports hold finite numbers only
		panic(err)
	}
	return string(b) + "\n"
}

// rateOptions are the command line of topic hz and bw.
type rateOptions struct {
	kind    rateKind
	client  clientFlags
	window  int
	reports int
	asJSON  bool
	filter  string
}

// parseRate parses the command line; done says to exit with code.
func parseRate(kind rateKind, args []string, stdout, stderr io.Writer) (o rateOptions, done bool, code int) {
	name := "topic " + kind.name
	summary := kind.summary + "\n\nThe messages of every topic TOPIC matches count together. A report is\nprinted once a second when messages arrived since the last one and the\nwindow holds two; runs until SIGINT or SIGTERM, or -n reports."
	fs := newFlags(name, "[flags] TOPIC", summary, stderr)
	o = rateOptions{kind: kind, client: addClientFlags(fs)}
	fs.Lookup("timeout").Usage = "how long to wait for the broker, then for the first message (none: exit 1)"
	fs.IntVar(&o.window, "window", 10000, "the number of most recent messages the figures are over (2 or more)")
	fs.IntVar(&o.reports, "n", 0, "exit after N reports (0: run until a signal)")
	fs.BoolVar(&o.asJSON, "json", false, "print each report as one JSON object, one a line")
	if done, code := parseFlags(fs, args, stdout); done {
		return o, true, code
	}
	if code, ok := o.check(fs, stderr); !ok {
		return o, true, code
	}
	return o, false, 0
}

// check validates the arguments after the flags.
func (o *rateOptions) check(fs *flag.FlagSet, stderr io.Writer) (int, bool) {
	prefix := "robotexec topic " + o.kind.name + ":"
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, prefix, "want one TOPIC")
		fs.Usage()
		return ExitUsage, false
	}
	switch {
	case o.window < 2:
		fmt.Fprintf(stderr, "%s -window %d: want 2 or more\n", prefix, o.window)
		return ExitUsage, false
	case o.reports < 0:
		fmt.Fprintf(stderr, "%s -n %d: want 0 or more\n", prefix, o.reports)
		return ExitUsage, false
	case *o.client.timeout <= 0:
		fmt.Fprintf(stderr, "%s -timeout %v: want more than 0\n", prefix, *o.client.timeout)
		return ExitUsage, false
	}
	o.filter = fs.Arg(0)
	if err := subscribers.ValidateFilter(o.filter); err != nil {
		fmt.Fprintln(stderr, prefix, err)
		return ExitUsage, false
	}
	return 0, true
}

func runRate(kind rateKind, args []string, stdout, stderr io.Writer) int {
	o, done, code := parseRate(kind, args, stdout, stderr)
	if done {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := o.client.dial(ctx, stderr, 0)
	if err != nil {
		fmt.Fprintf(stderr, "robotexec topic %s: %v\n", kind.name, err)
		return exitFor(err)
	}
	defer c.Close()
	return o.watch(ctx, c, stdout, stderr)
}

// watch subscribes to the topic and prints the reports until ctx ends, -n
// reports were printed, or no message came within -timeout. The
// subscription and the timers share one mutually exclusive group, so the
// window needs no lock.
func (o *rateOptions) watch(ctx context.Context, c *mqtt.Client, stdout, stderr io.Writer) int {
	prefix := "robotexec topic " + o.kind.name + ":"
	ex := executor.New(executor.Options{Workers: 1, Logger: slog.New(slog.NewTextHandler(stderr, nil))})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	owner := ex.NewOwner("topic "+o.kind.name, nil)
	w := newRateWindow(o.window)
	// A retained message is an old one handed over on subscribing: its
	// arrival says nothing of the topic's rate.
	_, err := owner.Subscribe(c, o.filter, func(ctx context.Context, m subscribers.Message) {
		if !m.Retained {
			w.add(m.Received, len(m.Payload))
		}
	}, executor.Depth(1000), executor.Overflow(subscribers.Block))
	if err != nil {
		fmt.Fprintln(stderr, prefix, err)
		return ExitFailure
	}
	var code atomic.Int32
	if err := o.timers(owner, w, stdout, stderr, cancel, &code); err != nil {
		fmt.Fprintln(stderr, prefix, err)
		return ExitFailure
	}
	if err := ex.Run(runCtx); err != nil {
		fmt.Fprintln(stderr, prefix, err)
		return ExitFailure
	}
	return int(code.Load())
}

// timers registers the report timer, every second, and the one-shot
// -timeout that fails the command when no message came.
func (o *rateOptions) timers(owner *executor.Owner, w *rateWindow, stdout, stderr io.Writer, stop func(), code *atomic.Int32) error {
	reported, lastSeen := 0, uint64(0)
	_, err := owner.Timer(time.Second, func(ctx context.Context, _ timers.Event) {
		if w.seen == lastSeen || (o.reports > 0 && reported >= o.reports) {
			return
		}
		r, ok := o.kind.report(w, o.filter)
		if !ok {
			return
		}
		lastSeen = w.seen
		io.WriteString(stdout, formatReport(r, o.asJSON))
		if reported++; o.reports > 0 && reported >= o.reports {
			stop()
		}
	})
	if err != nil {
		return err
	}
	_, err = owner.OneShot(*o.client.timeout, func(ctx context.Context, _ timers.Event) {
		if w.seen == 0 {
			fmt.Fprintf(stderr, "robotexec topic %s: no message on %q within %v\n", o.kind.name, o.filter, *o.client.timeout)
			code.Store(ExitFailure)
			stop()
		}
	})
	return err
}
