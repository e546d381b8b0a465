package robotexec

import (
	"fmt"
	"io"
)

// cmdTopicHz is not written yet.
func cmdTopicHz(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "robotexec topic hz: not yet")
	return ExitFailure
}

// cmdTopicBw is not written yet.
func cmdTopicBw(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "robotexec topic bw: not yet")
	return ExitFailure
}
