package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/recording"
	"github.com/robotexec/robotexec/subscribers"
)

// recordDepth is the queue depth of the recorder's subscriptions: with
// the block policy, a burst waits there, then at the broker.
const recordDepth = 10000

func cmdRecord(version string, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("record", "[flags] FILTER...", "Record every message matching the topic filters into an MCAP file, until SIGINT or\nSIGTERM, or -duration. JSON payloads go on json channels; others are kept byte\nfor byte.", stderr)
	cf := addClientFlags(fs)
	out := fs.String("o", "", "the MCAP `FILE` to write (default robotexec-<UTC time>.mcap)")
	duration := fs.Duration("duration", 0, "stop after this long (0: run until a signal)")
	qos := fs.Int("qos", 1, "QoS of the subscriptions: 0, 1 or 2")
	if done, code := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() == 0 || *qos < 0 || *qos > 2 || *duration < 0 {
		fmt.Fprintln(stderr, "robotexec record: want one or more topic filters, -qos 0, 1 or 2 and -duration zero or more")
		fs.Usage()
		return ExitUsage
	}
	for _, f := range fs.Args() {
		if err := subscribers.ValidateFilter(f); err != nil {
			fmt.Fprintln(stderr, "robotexec record:", err)
			return ExitUsage
		}
	}
	if *out == "" {
		*out = "robotexec-" + time.Now().UTC().Format("20060102T150405Z") + ".mcap"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := cf.dial(ctx, stderr, byte(*qos))
	if err != nil {
		fmt.Fprintln(stderr, "robotexec record:", err)
		return exitFor(err)
	}
	defer c.Close()
	rec, err := recording.Create(*out, recording.Options{Library: "robotexec " + app.Version(version)})
	if err != nil {
		fmt.Fprintln(stderr, "robotexec record:", err)
		return ExitFailure
	}
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	printed, err := recordUntil(ctx, c, rec, fs.Args(), stderr)
	st, cerr := rec.Close()
	fmt.Fprintf(stderr, "robotexec record: %d messages recorded to %s, %d dropped\n", st.Recorded, rec.Path(), st.Dropped)
	if cerr != nil && !printed {
		fmt.Fprintln(stderr, "robotexec record:", cerr)
	}
	if err != nil {
		fmt.Fprintln(stderr, "robotexec record:", err)
	}
	if err != nil || cerr != nil {
		return ExitFailure
	}
	return ExitOK
}

// recordUntil records what the filters match until ctx ends or a write
// error stops the recorder, which it prints at once (reporting true); then
// it drains what the subscriptions hold.
func recordUntil(ctx context.Context, c *mqtt.Client, rec *recording.Recorder, filters []string, stderr io.Writer) (bool, error) {
	ex := executor.New(executor.Options{Workers: 1, Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	o := ex.NewOwner("record", nil)
	for _, f := range filters {
		_, err := o.Subscribe(c, f, func(ctx context.Context, m subscribers.Message) {
			rec.Record(m.Topic, m.Payload, m.Received)
		}, executor.Depth(recordDepth), executor.Overflow(subscribers.Block))
		if err != nil {
			return false, err
		}
	}
	done := make(chan error, 1)
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { done <- ex.Run(runCtx) }()
	printed := false
	select {
	case <-ctx.Done():
	case <-rec.Done():
		fmt.Fprintln(stderr, "robotexec record:", rec.Err())
		printed = true
	}
	// What arrives from now on stays with the broker; what the
	// subscriptions hold is recorded as the executor drains (or, after a
	// write error, counted as dropped).
	c.Pause()
	cancel()
	return printed, <-done
}
