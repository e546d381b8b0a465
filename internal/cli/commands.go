package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/chrometrace"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
)

// shutdownGrace bounds what a clean stop takes past the drain deadline
// (executor.drain_timeout); past it the command exits anyway.
const shutdownGrace = 5 * time.Second

func cmdRun(version string, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run", "[flags] CONFIG", "Load CONFIG, start the embedded broker or connect to the configured one, start\nevery node and run until SIGINT or SIGTERM; then stop the sources, drain the\nqueues and exit 0. A second signal exits at once.", stderr)
	logFormat := fs.String("log-format", "text", "log format: text or json")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	tracePath := fs.String("trace", "", "write a Chrome trace (JSON, for ui.perfetto.dev) of the callback runs to `FILE` when stopped")
	traceRuns := fs.Int("trace-runs", chrometrace.DefaultLimit, "the number of most recent runs the trace keeps (32 bytes each, allocated at start)")
	record := fs.String("record", "", "record the run's inputs, its nodes' publications and its config to `FILE` (MCAP), for robotexec replay")
	if done, code := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "robotexec run: want one CONFIG argument")
		fs.Usage()
		return ExitUsage
	}
	logger, err := newLogger(stderr, *logFormat, *logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "robotexec run:", err)
		return ExitUsage
	}
	if *traceRuns <= 0 {
		fmt.Fprintf(stderr, "robotexec run: -trace-runs %d: want a positive number\n", *traceRuns)
		return ExitUsage
	}
	cfg, err := app.LoadAndCheck(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return ExitUsage
	}
	r := &runner{opts: app.Options{Record: *record, Version: version}, log: logger, stderr: stderr}
	if *tracePath != "" {
		// Created now, so that an unwritable path fails before anything
		// starts; written when the run stops.
		if r.trace, err = os.Create(*tracePath); err != nil {
			fmt.Fprintln(stderr, "robotexec run: -trace:", err)
			return ExitFailure
		}
		defer r.dropTrace()
		r.opts.TraceRuns = *traceRuns
	}
	return r.run(cfg)
}

// runner is robotexec run once its command line is read.
type runner struct {
	opts   app.Options
	log    *slog.Logger
	stderr io.Writer
	trace  *os.File // -trace's file until it is written
}

// run starts cfg and runs it until a signal, then stops it: it drains
// within the drain deadline and shutdownGrace, and a second signal exits
// at once.
func (r *runner) run(cfg *config.Config) int {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)

	// A signal during the start (waiting for the clock topic) ends it.
	startCtx, startDone := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	a, err := app.Start(startCtx, cfg, r.log, r.opts)
	startDone()
	if err != nil {
		fmt.Fprintln(r.stderr, "robotexec run:", err)
		switch {
		case len(config.Errors(err)) > 0:
			return ExitUsage
		case errors.Is(err, context.Canceled):
			return ExitOK // stopped before it started
		}
		return ExitFailure
	}
	sig := <-signals
	r.log.Info("stopping: draining the queues", "signal", sig.String())
	bound := cfg.Executor.DrainTimeout + shutdownGrace
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	// A second signal cuts the drain short: it cancels the Shutdown.
	second := make(chan os.Signal, 1)
	go func() {
		select {
		case sig := <-signals:
			second <- sig
			cancel()
		case <-ctx.Done():
		}
	}()
	err = a.Shutdown(ctx)
	cancel() // the watcher stops: a signal from now on is not "second"
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(r.stderr, "robotexec run: did not drain within %v: exiting\n", bound)
		return ExitFailure
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(r.stderr, "robotexec run: second signal (%v): exiting now\n", <-second)
		return ExitFailure
	default:
		fmt.Fprintln(r.stderr, "robotexec run:", err)
		return ExitFailure
	}
	return r.finish(a)
}

// finish writes the trace of a run that stopped cleanly.
func (r *runner) finish(a *app.App) int {
	if f := r.trace; f != nil {
		r.trace = nil
		if err := a.WriteTrace(f); err != nil {
			fmt.Fprintln(r.stderr, "robotexec run:", err)
			return ExitFailure
		}
	}
	r.log.Info("stopped")
	return ExitOK
}

// dropTrace removes -trace's file when it was not written (a failed
// start, a second signal): no empty file is left behind.
func (r *runner) dropTrace() {
	if r.trace != nil {
		r.trace.Close()
		os.Remove(r.trace.Name())
	}
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("-log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("-log-format %q: want text or json", format)
}

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("validate", "CONFIG", "Check CONFIG fully — schema, node types, node params (by building every node\nin a dry run) — without connecting to anything. Exit 0 if valid, 2 if not,\nwith every problem on stderr as FILE:LINE: FIELD: MESSAGE.", stderr)
	if done, code := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "robotexec validate: want one CONFIG argument")
		fs.Usage()
		return ExitUsage
	}
	cfg, err := app.LoadAndCheck(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return ExitUsage
	}
	noun := "nodes"
	if len(cfg.Nodes) == 1 {
		noun = "node"
	}
	fmt.Fprintf(stdout, "%s: valid, %d %s\n", cfg.File, len(cfg.Nodes), noun)
	return ExitOK
}

func cmdNodes(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("nodes", "", "List the registered node types with a one-line description.", stderr)
	if done, code := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 0 {
		return noArgs(fs, stderr)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, t := range nodes.Types() {
		fmt.Fprintf(tw, "%s\t%s\n", t.Name, t.Description)
	}
	tw.Flush()
	return ExitOK
}

func cmdPub(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("pub", "[flags] TOPIC PAYLOAD", "Publish one message and wait until the broker has it.", stderr)
	cf := addClientFlags(fs)
	qos := fs.Int("qos", 1, "QoS: 0, 1 or 2 (1: the broker's answer, a refusal with its reason, is awaited)")
	retain := fs.Bool("retain", false, "retain the message")
	if done, code := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(stderr, "robotexec pub: want TOPIC and PAYLOAD")
		fs.Usage()
		return ExitUsage
	}
	if *qos < 0 || *qos > 2 {
		fmt.Fprintf(stderr, "robotexec pub: -qos %d: want 0, 1 or 2\n", *qos)
		return ExitUsage
	}
	topic, payload := fs.Arg(0), fs.Arg(1)
	if err := subscribers.ValidateTopic(topic); err != nil {
		fmt.Fprintln(stderr, "robotexec pub:", err)
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := cf.dial(ctx, stderr, byte(*qos))
	if err != nil {
		fmt.Fprintln(stderr, "robotexec pub:", err)
		return exitFor(err)
	}
	defer c.Close()
	if err := subscribers.ValidateTopic(topic); err != nil {
		fmt.Fprintln(stderr, "robotexec pub: mqtt:", err)
		return ExitUsage
	}
	m := subscribers.Message{Topic: topic, Payload: []byte(payload), QoS: byte(*qos), Retained: *retain}
	pctx, cancel := context.WithTimeout(ctx, *cf.timeout)
	defer cancel()
	if err := c.PublishWait(pctx, m); err != nil {
		fmt.Fprintln(stderr, "robotexec pub:", err)
		return ExitFailure
	}
	return ExitOK
}

func cmdEcho(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("echo", "[flags] TOPIC_FILTER", "Print messages as they arrive, one a line: TOPIC PAYLOAD. Runs until SIGINT or\nSIGTERM, or until -n messages arrived.", stderr)
	cf := addClientFlags(fs)
	count := fs.Int("n", 0, "exit after N messages (0: run until a signal)")
	qos := fs.Int("qos", 0, "QoS of the subscription: 0, 1 or 2")
	if done, code := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "robotexec echo: want one TOPIC_FILTER")
		fs.Usage()
		return ExitUsage
	}
	if *qos < 0 || *qos > 2 || *count < 0 {
		fmt.Fprintln(stderr, "robotexec echo: -qos wants 0, 1 or 2 and -n zero or more")
		return ExitUsage
	}
	filter := fs.Arg(0)
	if err := subscribers.ValidateFilter(filter); err != nil {
		fmt.Fprintln(stderr, "robotexec echo:", err)
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := cf.dial(ctx, stderr, byte(*qos))
	if err != nil {
		fmt.Fprintln(stderr, "robotexec echo:", err)
		return exitFor(err)
	}
	defer c.Close()

	ex := executor.New(executor.Options{Workers: 1, Logger: slog.New(slog.NewTextHandler(stderr, nil))})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var seen atomic.Int64
	var out strings.Builder
	_, err = ex.NewOwner("echo", nil).Subscribe(c, filter, func(ctx context.Context, m subscribers.Message) {
		if *count > 0 && seen.Load() >= int64(*count) {
			return
		}
		out.Reset()
		out.WriteString(m.Topic)
		out.WriteByte(' ')
		out.Write(m.Payload)
		out.WriteByte('\n')
		io.WriteString(stdout, out.String())
		if n := seen.Add(1); *count > 0 && n >= int64(*count) {
			cancel()
		}
	}, executor.Depth(1000), executor.Overflow(subscribers.Block))
	if err != nil {
		fmt.Fprintln(stderr, "robotexec echo:", err)
		return ExitFailure
	}
	if err := ex.Run(runCtx); err != nil {
		fmt.Fprintln(stderr, "robotexec echo:", err)
		return ExitFailure
	}
	return ExitOK
}
