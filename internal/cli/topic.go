package cli

import (
	"fmt"
	"io"
)

// topicCommands are the subcommands of robotexec topic.
func topicCommands() []command {
	return []command{
		{"list", "[-broker URL] [-t D] [-json]", "the topics seen in the instances' graphs and in D of traffic, with their publishers and subscribers", cmdTopicList},
		{"hz", "[-broker URL] [-window N] [-n N] [-timeout D] [-json] TOPIC", "print a topic's message rate once a second", cmdTopicHz},
		{"bw", "[-broker URL] [-window N] [-n N] [-timeout D] [-json] TOPIC", "print a topic's bytes per second and message sizes once a second", cmdTopicBw},
	}
}

func cmdTopic(args []string, stdout, stderr io.Writer) int {
	return runSub("topic", topicCommands(), args, stdout, stderr)
}

// runSub runs the subcommand of group named by args[0].
func runSub(group string, subs []command, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help", "help":
			subUsage(stdout, group, subs)
			return ExitOK
		}
		for _, c := range subs {
			if c.name == args[0] {
				return c.run(args[1:], stdout, stderr)
			}
		}
		fmt.Fprintf(stderr, "robotexec %s: unknown subcommand %q\n", group, args[0])
	}
	subUsage(stderr, group, subs)
	return ExitUsage
}

func subUsage(w io.Writer, group string, subs []command) {
	fmt.Fprintf(w, "Usage:\n")
	for _, c := range subs {
		fmt.Fprintf(w, "  robotexec %s %s %s\n        %s\n", group, c.name, c.args, c.summary)
	}
}
