package robotexec

import (
	"io"
	"os"

	"github.com/robotexec/robotexec/internal/cli"
)

// Version is the program's version; the build may set it with
// -ldflags "-X github.com/robotexec/robotexec.Version=v1.2.3". When empty,
// the module's version from the build info is used.
var Version = ""

// Main runs the robotexec command line with os.Args and exits with its
// status.
func Main() {
	os.Exit(Run(os.Args[1:], os.Stdout, os.Stderr))
}

// Run runs the command line args (without the program name), writing to
// stdout and stderr, and returns the exit status, as docs/cli.md (Exit
// codes) documents it: 0 for a clean stop, 1 for a runtime failure, 2 for
// a bad config or a bad command line.
func Run(args []string, stdout, stderr io.Writer) int {
	return cli.Run(args, stdout, stderr, Version)
}
