package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/robotexec/robotexec/internal/bench"
)

func cmdBench(args []string, stdout, stderr io.Writer) int {
	if role := os.Getenv(bench.ChildEnv); role != "" {
		return benchChild(role, args, stderr)
	}
	fs := newFlags("bench", "[flags]",
		"Run the executor benchmark suite on this machine and print a table: each metric\n"+
			"beside its baseline, measured in the same run, median of the repetitions.\n"+
			"A missed target is reported, not an error. See BENCHMARKS.md.", stderr)
	budget := fs.Duration("budget", bench.DefaultBudget, "about how long the whole suite may take")
	repeat := fs.Int("repeat", bench.DefaultRepeat, "repetitions of each metric (the median is quoted)")
	workers := fs.Int("workers", runtime.NumCPU(), "the executor's workers, and the baselines' goroutines")
	jsonOut := fs.Bool("json", false, `print JSON: {"metrics":[{"name":...,"value":...,"baseline":...,"ratio":...,"unit":...}]}`)
	only := fs.String("only", "", "run only these comma-separated groups: "+strings.Join(bench.Groups, ","))
	quiet := fs.Bool("q", false, "print no progress on stderr")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to `file`")
	if done, code := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 0 {
		return noArgs(fs, stderr)
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "robotexec bench: "+format+"\n", a...)
		fs.Usage()
		return ExitUsage
	}
	switch {
	case *budget <= 0:
		return usageErr("-budget %v: want a positive duration", *budget)
	case *repeat < 1:
		return usageErr("-repeat %d: want 1 or more", *repeat)
	case *workers < 1:
		return usageErr("-workers %d: want 1 or more", *workers)
	}
	cfg := bench.Config{Budget: *budget, Repeat: *repeat, Workers: *workers}
	cfg.Executable, _ = os.Executable()
	if *only != "" {
		for _, g := range strings.Split(*only, ",") {
			cfg.Only = append(cfg.Only, strings.TrimSpace(g))
		}
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	if *cpuProfile != "" {
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "robotexec bench:", err)
			return ExitFailure
		}
		defer stopProfile()
	}
	return runBench(cfg, *jsonOut, stdout, stderr, fs.Usage)
}

// startCPUProfile starts a CPU profile into the file at path; the
// function it returns stops it and closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// runBench runs the suite until it ends or a signal comes, and prints its
// report as a table or JSON.
func runBench(cfg bench.Config, jsonOut bool, stdout, stderr io.Writer, usage func()) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := bench.Run(ctx, cfg)
	if rep == nil {
		// Only an invalid config gives no report: -only named no group.
		fmt.Fprintln(stderr, "robotexec", err) // "robotexec bench: ..."
		usage()
		return ExitUsage
	}
	if jsonOut {
		err = errors.Join(err, rep.WriteJSON(stdout))
	} else {
		err = errors.Join(err, rep.WriteTable(stdout))
	}
	code := ExitOK
	if err != nil {
		fmt.Fprintln(stderr, "robotexec bench:", err)
		code = ExitFailure
	}
	for _, m := range rep.Metrics {
		if m.Error != "" {
			fmt.Fprintf(stderr, "robotexec bench: %s: %s\n", m.Name, m.Error)
			code = ExitFailure
		}
	}
	return code
}

// benchChild runs the suite's child process role (bench.ChildEnv) with
// args until SIGINT or SIGTERM.
func benchChild(role string, args []string, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench.RunChild(ctx, role, args); err != nil {
		fmt.Fprintln(stderr, "robotexec bench:", err)
		return ExitFailure
	}
	return ExitOK
}
