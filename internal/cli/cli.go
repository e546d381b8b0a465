package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/robotexec/robotexec/internal/app"
	_ "github.com/robotexec/robotexec/nodes/builtin" // the built-in node types
)

// Exit codes of the command, as docs/cli.md (Exit codes) documents them.
const (
	// ExitOK is a clean stop.
	ExitOK = 0
	// ExitFailure is a runtime failure.
	ExitFailure = 1
	// ExitUsage is a bad config or a bad command line.
	ExitUsage = 2
)

type command struct {
	name, args, summary string
	run                 func(args []string, stdout, stderr io.Writer) int
}

// commands are the commands of a program of version (see app.Version).
func commands(version string) []command {
	return []command{
		{"run", "[flags] CONFIG", "load CONFIG, start the broker (or connect to it) and every node; run until SIGINT/SIGTERM, then drain and exit", withVersion(cmdRun, version)},
		{"validate", "CONFIG", "check CONFIG fully (schema, node types, node params) without connecting", cmdValidate},
		{"nodes", "", "list the registered node types", cmdNodes},
		{"pub", "[-broker URL] [-qos N] [-retain] TOPIC PAYLOAD", "publish one message", cmdPub},
		{"echo", "[-broker URL] [-n N] TOPIC_FILTER", "print messages as they arrive, one a line: TOPIC PAYLOAD", cmdEcho},
		{"record", "[-broker URL] [-o FILE] [-duration D] FILTER...", "record the messages matching the filters into an MCAP file", withVersion(cmdRecord, version)},
		{"info", "[-json] FILE", "print an MCAP recording's topics, counts, rates and times", cmdInfo},
		{"play", "[-broker URL] [-rate R] [-loop] [-topics F,...] [-clock] FILE", "publish a recording with its original timing", cmdPlay},
		{"replay", "[-check] [-o FILE] RECORDING [CONFIG]", "re-run a recorded run's nodes offline on its inputs; -check compares the outputs", cmdReplay},
		{"node", "list|info [flags]", "see the instances and nodes on the broker, from their graph topics", cmdNode},
		{"topic", "list|hz|bw [flags]", "see the topics on the broker: who publishes and subscribes, rates, bandwidth", cmdTopic},
		{"view", "[-broker URL] [-listen ADDR] [FILTER...]", "serve the live view (Foxglove WebSocket protocol) of the broker's messages, with no nodes", cmdView},
		{"bench", "[flags]", "run the executor benchmark suite on this machine and print a table", cmdBench},
		{"version", "", "print the version", withVersion(cmdVersion, version)},
	}
}

// withVersion gives a command the program's version.
func withVersion(cmd func(version string, args []string, stdout, stderr io.Writer) int, version string) func(args []string, stdout, stderr io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int { return cmd(version, args, stdout, stderr) }
}

// Run runs the command line args (without the program name) of a program
// of version (empty: the module's, see app.Version), writing to stdout and
// stderr, and returns the exit status.
func Run(args []string, stdout, stderr io.Writer, version string) int {
	if len(args) == 0 {
		usage(stderr)
		return ExitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return ExitOK
	}
	for _, c := range commands(version) {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "robotexec: unknown command %q\n", args[0])
	usage(stderr)
	return ExitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "robotexec runs robot nodes' callbacks on timers and MQTT messages.")
	fmt.Fprintln(w, "\nUsage:")
	for _, c := range commands("") {
		fmt.Fprintf(w, "  %s\n        %s\n", strings.TrimSpace("robotexec "+c.name+" "+c.args), c.summary)
	}
	fmt.Fprintln(w, "\nRun 'robotexec COMMAND -h' for a command's flags.")
}

// newFlags returns the flag set of a command, writing its usage to stderr.
func newFlags(name, args, summary string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\n%s\n", strings.TrimSpace("robotexec "+name+" "+args), summary)
		if hasFlags(fs) {
			fmt.Fprintln(fs.Output(), "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parseFlags parses args, whose flags may stand anywhere, before, between
// or after the arguments (`--` ends the flags); -h prints the usage to
// stdout and asks for exit 0. fs.Args() are then the arguments.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (done bool, code int) {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return true, ExitOK
		}
		if a == "--" {
			break
		}
	}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return true, ExitUsage
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			positional = append(positional, rest...) // after --
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	// Parse stops at "--" and keeps what follows as the arguments.
	_ = fs.Parse(append([]string{"--"}, positional...))
	return false, 0
}

func cmdVersion(version string, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", "", "Print the version.", stderr)
	if done, code := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 0 {
		return noArgs(fs, stderr)
	}
	fmt.Fprintln(stdout, "robotexec", app.Version(version))
	return ExitOK
}

// noArgs reports arguments given to a command that takes none.
func noArgs(fs *flag.FlagSet, stderr io.Writer) int {
	fmt.Fprintf(stderr, "robotexec %s: takes no arguments\n", fs.Name())
	fs.Usage()
	return ExitUsage
}
