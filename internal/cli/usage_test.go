package cli

// Tests of the command line itself: the usage, -h of every command and
// subcommand, version and nodes.

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/nodes"
)

func TestUsage(t *testing.T) {
	t.Parallel()
	var every []string
	for _, c := range commands("") {
		every = append(every, strings.TrimSpace("robotexec "+c.name+" "+c.args))
	}
	tests := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr []string // substrings; nil: the stream is empty
	}{
		{"no args", nil, ExitUsage, nil, append([]string{"Usage:"}, every...)},
		{"-h", []string{"-h"}, ExitOK, append([]string{"Usage:", "Run 'robotexec COMMAND -h'"}, every...), nil},
		{"--help", []string{"--help"}, ExitOK, []string{"Usage:"}, nil},
		{"help", []string{"help"}, ExitOK, []string{"Usage:"}, nil},
		{"unknown command", []string{"fly"}, ExitUsage, nil, []string{`robotexec: unknown command "fly"`, "Usage:"}},
		{"a flag for a command", []string{"-v"}, ExitUsage, nil, []string{`robotexec: unknown command "-v"`}},

		{"node alone", []string{"node"}, ExitUsage, nil, []string{"Usage:", "robotexec node list", "robotexec node info"}},
		{"node -h", []string{"node", "-h"}, ExitOK, []string{"robotexec node list [-broker URL] [-json]", "robotexec node info"}, nil},
		{"node help", []string{"node", "help"}, ExitOK, []string{"robotexec node list"}, nil},
		{"node unknown", []string{"node", "kill"}, ExitUsage, nil, []string{`robotexec node: unknown subcommand "kill"`, "robotexec node info"}},
		{"topic alone", []string{"topic"}, ExitUsage, nil, []string{"robotexec topic list", "robotexec topic hz", "robotexec topic bw"}},
		{"topic --help", []string{"topic", "--help"}, ExitOK, []string{"robotexec topic list", "robotexec topic bw"}, nil},
		{"topic unknown", []string{"topic", "echo"}, ExitUsage, nil, []string{`robotexec topic: unknown subcommand "echo"`}},

		{"version", []string{"version"}, ExitOK, []string{"robotexec " + testVersion + "\n"}, nil},
		{"version with an argument", []string{"version", "v2"}, ExitUsage, nil, []string{"robotexec version: takes no arguments", "Usage: robotexec version"}},
		{"nodes with an argument", []string{"nodes", "bridge"}, ExitUsage, nil, []string{"robotexec nodes: takes no arguments", "Usage: robotexec nodes"}},
		{"bench with an argument", []string{"bench", "now"}, ExitUsage, nil, []string{"robotexec bench: takes no arguments", "Usage: robotexec bench [flags]", "Flags:"}},
		{"a flag after --", []string{"version", "--", "-h"}, ExitUsage, nil, []string{"robotexec version: takes no arguments"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := cli(t, tt.args...)
			require.Equal(t, tt.code, r.code, "%s", r)
			requireHolds(t, "stdout", r.stdout, tt.stdout)
			requireHolds(t, "stderr", r.stderr, tt.stderr)
		})
	}
}

// requireHolds checks that out holds each of want, or is empty when want
// is nil.
func requireHolds(t *testing.T, name, out string, want []string) {
	t.Helper()
	if want == nil {
		require.Empty(t, out, "%s", name)
	}
	for _, w := range want {
		require.Contains(t, out, w, "%s", name)
	}
}

// TestCommandHelp: -h, -help and --help of every command and subcommand
// print its usage, with its flags, on stdout and exit 0.
func TestCommandHelp(t *testing.T) {
	t.Parallel()
	names := [][]string{}
	for _, c := range commands("") {
		if c.name != "node" && c.name != "topic" {
			names = append(names, []string{c.name})
		}
	}
	for _, c := range nodeCommands() {
		names = append(names, []string{"node", c.name})
	}
	for _, c := range topicCommands() {
		names = append(names, []string{"topic", c.name})
	}
	flags := map[string][]string{
		"run":        {"-log-format", "-log-level", "-trace", "-trace-runs", "-record"},
		"pub":        {"-broker", "-qos", "-retain", "-timeout", "-username", "-password"},
		"echo":       {"-broker", "-n", "-qos"},
		"record":     {"-o", "-duration", "-qos"},
		"play":       {"-rate", "-loop", "-topics", "-clock", "-clock-topic"},
		"replay":     {"-check", "-o", "-log-level"},
		"info":       {"-json"},
		"bench":      {"-budget", "-repeat", "-workers", "-json", "-only", "-q", "-cpuprofile"},
		"node list":  {"-broker", "-json"},
		"node info":  {"-broker", "-json"},
		"topic list": {"-t", "-json"},
		"topic hz":   {"-window", "-n", "-timeout", "-json"},
		"topic bw":   {"-window", "-n", "-timeout", "-json"},
		"view":       {"-broker", "-listen", "-qos", "-config"},
	}
	for i, name := range names {
		help := []string{"-h", "-help", "--help"}[i%3]
		full := strings.Join(name, " ")
		t.Run(full, func(t *testing.T) {
			t.Parallel()
			r := cli(t, append(name, help)...)
			require.Equal(t, ExitOK, r.code, "%s", r)
			require.Empty(t, r.stderr)
			require.True(t, strings.HasPrefix(r.stdout, "Usage: robotexec "+full), "%s", r)
			for _, f := range flags[full] {
				require.Regexp(t, `(?m)^  `+f+`\b`, r.stdout, "the flag %s", f)
			}
			if len(flags[full]) == 0 {
				require.NotContains(t, r.stdout, "Flags:")
			}
		})
	}
}

// TestBadFlags: a flag no command has, or a value of the wrong kind, is a
// usage error with the command's usage.
func TestBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "-bogus", "a.yaml"}, {"validate", "-x", "a.yaml"}, {"nodes", "-json"},
		{"pub", "-qos", "one", "a", "b"}, {"echo", "-n", "many", "a"}, {"record", "-duration", "long", "a/#"},
		{"info", "-yaml", "f.mcap"}, {"play", "-rate", "fast", "f.mcap"}, {"replay", "-quick", "f.mcap"},
		{"node", "list", "-all"}, {"topic", "hz", "-window", "wide", "t"}, {"bench", "-budget", "soon"},
		{"view", "-qos", "high"}, {"version", "-short"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			r := cli(t, args...)
			require.Equal(t, ExitUsage, r.code, "%s", r)
			require.Empty(t, r.stdout)
			require.Regexp(t, `flag provided but not defined|invalid value`, r.stderr)
			require.Contains(t, r.stderr, "Usage: robotexec "+args[0])
		})
	}
}

func TestNodes(t *testing.T) {
	t.Parallel()
	r := cli(t, "nodes")
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Empty(t, r.stderr)
	types := nodes.Types()
	ls := lines(r.stdout)
	require.Len(t, ls, len(types), "one line per registered type:\n%s", r.stdout)
	for i, typ := range types {
		require.Regexp(t, `^`+regexp.QuoteMeta(typ.Name)+` +`+regexp.QuoteMeta(typ.Description)+`$`, ls[i])
	}
	for _, builtin := range []string{"bridge", "heartbeat", "watchdog"} {
		require.Regexp(t, `(?m)^`+builtin+` +\S`, r.stdout)
	}
}
